"""kafka_patterns.config.names against the chart: the Python side (the Pulumi program,
the harness, the tests) names Kubernetes objects as the chart's templates do
(_helpers.tpl kp.k8sName, kp.cluster, kp.connectName). The chart is the oracle: these
render it and compare, for the catalogue's own names and for names long enough to be
cut (the hashed form)."""

from __future__ import annotations

import pytest
from manifests import STRIMZI_VARIANTS, by_name, kinds, objects_of, values_of

from kafka_patterns.config import catalogue, names

LONG_TOPIC = "telemetry.Weather_Station." + "very-long-segment." * 4 + "readings"
LONG_CLUSTER = "a-kafka-cluster-name-that-goes-on-well-past-forty-characters"


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_topics_users_kafka_and_connect_are_named_as_the_chart_names_them(rendered, variant):
    objects, values = rendered[variant], values_of(variant)
    assert set(by_name(objects, "KafkaTopic")) == {names.k8s_name(t) for t in catalogue.topics()}
    assert {names.k8s_name(j) for j in catalogue.job_specs()} <= set(by_name(objects, "KafkaUser"))
    assert [k["metadata"]["name"] for k in kinds(objects, "Kafka")] == [names.cluster_name(values)]
    assert [c["metadata"]["name"] for c in kinds(objects, "KafkaConnect")] == [names.connect_name(values)]


def test_a_name_too_long_for_kubernetes_is_cut_and_hashed_alike(helm):
    assert len(names.k8s_name(LONG_TOPIC)) <= names.MAX_NAME < len(LONG_TOPIC)
    objects = objects_of(helm, f"topics[0].name={LONG_TOPIC}", "topics[0].partitions=1",
                         variant=STRIMZI_VARIANTS[0])
    assert names.k8s_name(LONG_TOPIC) in by_name(objects, "KafkaTopic")


def test_a_long_cluster_name_is_cut_at_forty_alike(helm):
    objects = objects_of(helm, f"kafka.clusterName={LONG_CLUSTER}", variant=STRIMZI_VARIANTS[0])
    values = {"kafka": {"clusterName": LONG_CLUSTER}, "cluster": {"name": "unused"}}
    assert [k["metadata"]["name"] for k in kinds(objects, "Kafka")] == [names.cluster_name(values)]
    assert [c["metadata"]["name"] for c in kinds(objects, "KafkaConnect")] == [names.connect_name(values)]
    assert len(names.cluster_name(values)) <= names.MAX_CLUSTER_NAME

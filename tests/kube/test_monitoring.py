"""The canary and the lag exporter as the chart deploys them on the local Kubernetes
(values-local.yaml): one ready pod each; the canary delivers through the cluster and
loses nothing; the lag exporter reports the canary's group. Their metrics are read as
a Prometheus would scrape them, from the pods' `metrics` port (through the API
server's pod proxy)."""

from __future__ import annotations

import pod_metrics
import pytest

from kafka_patterns.clients import kafka

pytestmark = pytest.mark.slow
NAMESPACE = "kafka-patterns"


def scrape(kubectl, component: str) -> dict[str, float]:
    return pod_metrics.scrape(kubectl, NAMESPACE, component)


def test_the_canary_pod_delivers_through_the_cluster_and_loses_nothing(kubectl):
    samples = kafka.wait_until(
        lambda: (m := scrape(kubectl, "canary")).get("kafka_patterns_canary_records_consumed_total", 0) > 0 and m,
        timeout=180, interval=3, what="the canary pod's first consumed probes")
    assert samples["kafka_patterns_canary_records_lost_total"] == 0, samples
    assert samples["kafka_patterns_canary_records_acked_total"] > 0, samples


def test_the_lag_exporter_pod_reports_the_canary_pods_group(kubectl):
    kafka.wait_until(
        lambda: scrape(kubectl, "lag-exporter").get("kafka_consumergroup_lag{consumergroup=canary.kube}") is not None,
        timeout=180, interval=3, what="the lag of group canary.kube from the lag-exporter pod")

"""Kafka on the local Kubernetes, reconciled by a real Strimzi operator: the operator and
Kafka images `make image` built from Strimzi's source archive, the operator installed from
Strimzi's own Helm chart, and the chart's Strimzi-mode release (values-local-strimzi.yaml,
namespace kafka-patterns-strimzi) that `make deploy STACK=local` installs beside the
bring-your-own one: the Kafka CR and its node pool Ready in KRaft, every catalogue topic
and user reconciled, Kafka Connect Ready with the Debezium plugins and the CDC connectors
running on a replication slot of their own, and, from a pod, the
KafkaUsers' ACLs allowing a job what it needs and refusing the rest."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
import yaml
from probe_pod import run_probe
from strimzi_access import CLUSTER, NAMESPACE

from helpers import ROOT
from kafka_patterns.clients import postgres
from kafka_patterns.config import names

OPERATOR_NAMESPACE = "kafka-patterns-operators"
CATALOGUE = yaml.safe_load((ROOT / "catalogue" / "catalogue.yaml").read_text())
VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())
VALUES = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values-local-strimzi.yaml").read_text())
STRIMZI_IMAGES = "docker.io/kafka-patterns"
# The probe's job: what one-to-one may and may not do (catalogue: it reads weather.readings
# in its group and writes dead letters; rpc.requests and the work-queue group are others').
PROBE_JOB = next(j for j in CATALOGUE["jobs"] if j["name"] == "one-to-one")


def get(kubectl, *args: str) -> dict:
    return json.loads(kubectl("get", *args, "-o", "json", check=True).stdout)


def ready(resource: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in resource.get("status", {}).get("conditions", []))


@pytest.fixture(scope="module")
def kafka(kubectl) -> dict:
    """The Kafka CR, once Ready (the deploy waited for it; a rolling update may be running)."""
    kubectl("wait", "-n", NAMESPACE, f"kafka/{CLUSTER}", "--for=condition=Ready", "--timeout=600s", timeout=620)
    return get(kubectl, "-n", NAMESPACE, f"kafka/{CLUSTER}")


def test_the_operator_runs_the_image_built_from_source(kubectl):
    deployment = get(kubectl, "-n", OPERATOR_NAMESPACE, "deployment/strimzi-cluster-operator")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"{STRIMZI_IMAGES}/operator:{VERSIONS['strimzi_version']}"
    assert deployment["status"].get("availableReplicas", 0) >= 1, deployment["status"]


def test_the_kafka_cluster_is_ready_in_kraft_with_the_catalogues_version(kafka, kubectl):
    status = kafka["status"]
    print(f"\nKafka {CLUSTER} status.conditions: {json.dumps(status['conditions'], indent=1)}")
    assert ready(kafka), status["conditions"]
    assert status["kafkaVersion"] == VERSIONS["kafka_version"]
    assert status.get("clusterId"), status
    pool = get(kubectl, "-n", NAMESPACE, "kafkanodepool/dual-role")
    assert sorted(pool["status"]["roles"]) == ["broker", "controller"]
    assert sorted(pool["status"]["nodeIds"]) == list(range(VALUES["kafka"]["brokers"]["replicas"]))


def test_every_kafka_pod_runs_the_image_built_here_within_its_memory_limit(kafka, kubectl):
    pods = get(kubectl, "-n", NAMESPACE, "pods", "-l", f"strimzi.io/cluster={CLUSTER},strimzi.io/kind=Kafka,"
               "strimzi.io/pool-name=dual-role")["items"]
    assert len(pods) == VALUES["kafka"]["brokers"]["replicas"]
    for pod in pods:
        kafka_container = next(c for c in pod["spec"]["containers"] if c["name"] == "kafka")
        assert kafka_container["image"] == (f"{STRIMZI_IMAGES}/kafka:{VERSIONS['strimzi_version']}"
                                            f"-kafka-{VERSIONS['kafka_version']}")
        limits = VALUES["kafka"]["brokers"]["resources"]["limits"]
        assert kafka_container["resources"]["limits"]["memory"] == limits["memory"]


def test_every_catalogue_topic_is_reconciled_ready(kafka, kubectl):
    topics = get(kubectl, "-n", NAMESPACE, "kafkatopics")["items"]
    names = {t["spec"].get("topicName", t["metadata"]["name"]) for t in topics}
    assert {t["name"] for t in CATALOGUE["topics"]} <= names
    not_ready = [t["metadata"]["name"] for t in topics if not ready(t)]
    assert not_ready == [], f"KafkaTopics not Ready: {not_ready}"


def test_every_catalogue_job_has_a_ready_kafka_user_with_its_password_secret(kafka, kubectl):
    users = {u["metadata"]["name"]: u for u in get(kubectl, "-n", NAMESPACE, "kafkausers")["items"]}
    expected = {names.k8s_name(j["name"]) for j in CATALOGUE["jobs"]}
    assert expected <= set(users)
    not_ready = [name for name, u in users.items() if not ready(u)]
    assert not_ready == [], f"KafkaUsers not Ready: {not_ready}"
    secret = get(kubectl, "-n", NAMESPACE, f"secret/{PROBE_JOB['name']}")
    assert set(secret["data"]) >= {"password", "sasl.jaas.config"}


def test_kafka_connect_is_ready_on_the_image_built_here_with_the_debezium_plugins(kafka, kubectl):
    connect = get(kubectl, "-n", NAMESPACE, f"kafkaconnect/{CLUSTER}-connect")
    assert ready(connect), connect["status"]
    assert connect["spec"]["image"] == f"{STRIMZI_IMAGES}/kafka-connect:{VERSIONS['strimzi_version']}" \
                                       f"-kafka-{VERSIONS['kafka_version']}"
    plugins = {p["class"]: p["version"] for p in connect["status"]["connectorPlugins"]}
    assert plugins.get("io.debezium.connector.postgresql.PostgresConnector") == VERSIONS["debezium_version"]
    assert plugins.get("io.debezium.connector.jdbc.JdbcSinkConnector") == VERSIONS["debezium_jdbc_version"]


def test_the_cdc_connectors_run_with_a_replication_slot_of_their_own(kafka, kubectl):
    names = [c["name"] for c in CATALOGUE["connectors"]]
    kubectl("wait", "-n", NAMESPACE, *[f"kafkaconnector/{n}" for n in names], "--for=condition=Ready",
            "--timeout=300s", timeout=320)
    for name in names:
        status = get(kubectl, "-n", NAMESPACE, f"kafkaconnector/{name}")["status"]["connectorStatus"]
        assert status["connector"]["state"] == "RUNNING", (name, status)
        assert [t["state"] for t in status["tasks"]] == ["RUNNING"], (name, status)
    # On the host's PostgreSQL, beside the host Connect's slot, and streaming to this one.
    source = VALUES["connect"]["connectorConfig"]["stations-source"]
    slots = dict(postgres.query("SELECT slot_name, active FROM pg_replication_slots WHERE plugin = 'pgoutput'"))
    assert slots.get(source["slot.name"]) is True, slots
    publications = {r[0] for r in postgres.query("SELECT pubname FROM pg_publication")}
    assert source["publication.name"] in publications, publications


@pytest.fixture(scope="module")
def probe(kafka, kubectl) -> dict:
    """kafka_probe.py once, in a pod of the project image, as the probe job's KafkaUser."""
    name = f"kafka-probe-{uuid.uuid4().hex[:6]}"
    foreign_group = next(j["name"] for j in CATALOGUE["jobs"] if j["name"] == "work-queue")
    env = {"BOOTSTRAP": f"{CLUSTER}-kafka-bootstrap:9093", "CA_FILE": "/ca/ca.crt", "USER": PROBE_JOB["name"],
           "USER_PASSWORD_FILE": "/user/password", "OWN_INPUT": PROBE_JOB["inputs"][0],
           "OWN_WRITE": PROBE_JOB["deadletter"], "FOREIGN_TOPIC": "rpc.requests", "FOREIGN_GROUP": foreign_group}
    return run_probe(kubectl, NAMESPACE, name, Path(__file__).parent / "kafka_probe.py", env,
                     {"/user": PROBE_JOB["name"], "/ca": f"{CLUSTER}-cluster-ca-cert"}, timeout=300)


def test_a_job_pod_writes_with_acks_all_and_joins_its_own_group(probe):
    assert probe["written"] is None, probe["written"]
    assert probe["own_group"] == "none: partitions assigned"


def test_the_jobs_input_is_replicated_on_every_node_and_fully_in_sync(probe):
    replication = probe["replication"]
    assert replication["brokers"] == VALUES["kafka"]["brokers"]["replicas"]
    rf = CATALOGUE["cluster"]["replicationFactor"]
    assert replication["partitions"] and all(p == {"replicas": rf, "isr": rf}
                                             for p in replication["partitions"].values()), replication


REFUSALS = {
    "plain text": {"_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT"},
    "TLS without credentials": {"_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT"},
    "a wrong password": {"_AUTHENTICATION"},
    "produce to its own input": {"TOPIC_AUTHORIZATION_FAILED"},
    "consume a topic without an ACL": {"TOPIC_AUTHORIZATION_FAILED"},
    "join another job's group": {"GROUP_AUTHORIZATION_FAILED"},
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_job_pod_is_refused(probe, case):
    assert probe["refusals"][case] in REFUSALS[case], probe["refusals"][case]


def test_the_harness_on_the_host_writes_and_reads_back_through_the_nodeport_listener(kafka, in_cluster_kafka):
    """What the patterns against the in-cluster Kafka need first: the harness (here, on the
    host) reaches every broker at its advertised node address over TLS with hostname
    verification, as its KafkaUser."""
    from confluent_kafka import TopicPartition

    from kafka_patterns.clients import kafka as kafka_client

    topic, probe = "weather.readings", f"harness-probe-{time.time_ns()}".encode()
    written: list = []
    producer = kafka_client.producer()
    producer.produce(topic, key=probe, value=probe, on_delivery=lambda err, m: written.append(err or m))
    assert producer.flush(60) == 0 and written and not isinstance(written[0], Exception), written
    msg = written[0]
    consumer = kafka_client.probe()
    try:
        consumer.assign([TopicPartition(topic, msg.partition(), msg.offset())])
        got = kafka_client.wait_until(lambda: consumer.poll(1.0), timeout=60, what="the probe read back")
        assert got.error() is None and got.value() == probe
    finally:
        consumer.close()

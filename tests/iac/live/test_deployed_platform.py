"""The deployed platform: broker and controller pods running, every catalogue topic
and user Ready, Connect Ready with its connectors RUNNING, the streaming Spark
applications RUNNING. Skips without a cluster (see conftest.py)."""

from __future__ import annotations

import pytest
import testinfra
from live_cluster import condition


def pods(live, role: str) -> list[dict]:
    return live.items("pods", "-l", f"strimzi.io/cluster={live.cluster},strimzi.io/{role}-role=true")


def test_kafka_is_ready(live):
    assert condition(live.get("kafka", live.cluster)) == "True"


@pytest.mark.parametrize("role", ["controller", "broker"])
def test_three_pods_of_each_role_are_running(live, role):
    found = pods(live, role)
    assert len(found) == 3, [p["metadata"]["name"] for p in found]
    for pod in found:
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        assert all(c["ready"] for c in pod["status"]["containerStatuses"]), pod["metadata"]["name"]


def test_brokers_keep_their_log_on_the_persistent_volume(live):
    for pod in pods(live, "broker"):
        host = testinfra.get_host(f"kubectl://{pod['metadata']['name']}?container=kafka&namespace={live.namespace}")
        assert host.file("/var/lib/kafka/data-0").is_directory
        assert host.mount_point("/var/lib/kafka/data-0").exists


def test_every_catalogue_topic_is_ready_with_its_partitions(live, cat):
    topics = {t["spec"]["topicName"]: t for t in live.items("kafkatopics")}
    for t in cat["topics"]:
        assert t["name"] in topics, t["name"]
        assert condition(topics[t["name"]]) == "True", t["name"]
        assert topics[t["name"]]["spec"]["partitions"] == t["partitions"]


def test_every_job_user_is_ready_with_its_secret(live, cat):
    users = {u["metadata"]["name"]: u for u in live.items("kafkausers")}
    secrets = {s["metadata"]["name"] for s in live.items("secrets")}
    for job in cat["jobs"]:
        name = job["name"].lower().replace(".", "-").replace("_", "-")
        assert condition(users[name]) == "True", name
        assert name in secrets, name


def test_connect_is_ready_and_every_connector_runs(live, cat):
    assert condition(live.get("kafkaconnect", live.connect)) == "True"
    connectors = {c["metadata"]["name"]: c for c in live.items("kafkaconnectors")}
    for c in cat["connectors"]:
        status = connectors[c["name"]].get("status", {}).get("connectorStatus", {})
        assert status.get("connector", {}).get("state") == "RUNNING", (c["name"], status)
        assert all(t["state"] == "RUNNING" for t in status.get("tasks", [])), (c["name"], status)


def test_the_streaming_spark_applications_run(live, cat):
    apps = {a["metadata"]["name"]: a for a in live.items("sparkapplications", "-l", "kafka-patterns/job")
            if not a["metadata"].get("ownerReferences")}
    for job in cat["jobs"]:
        if job["engine"] == "spark" and not job.get("schedule"):
            state = apps[job["name"]].get("status", {}).get("applicationState", {}).get("state")
            assert state == "RUNNING", (job["name"], state)

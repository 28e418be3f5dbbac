"""The deployed platform: the operators Available; on a Strimzi stack, broker and
controller pods running, every catalogue topic and user Ready, Connect Ready with its
connectors RUNNING; on every stack, the Secrets the jobs read, the streaming Spark
applications RUNNING, the scheduled ones scheduled and the client jobs' pods
available. Skips without a cluster (see conftest.py); the Strimzi checks skip on a
bring-your-own-Kafka stack."""

from __future__ import annotations

import os

import pytest
import testinfra
from live_cluster import condition

from kafka_patterns.config.names import k8s_name


def pods(live, role: str) -> list[dict]:
    return live.items("pods", "-l", f"strimzi.io/cluster={live.cluster},strimzi.io/{role}-role=true")


def test_the_operators_are_available(live):
    deployments = live.items("deployments", namespace=live.operator_namespace)
    assert deployments, f"no operator Deployment in namespace {live.operator_namespace}"
    for d in deployments:
        want = d["spec"].get("replicas", 1)
        assert d.get("status", {}).get("availableReplicas", 0) == want, (d["metadata"]["name"], d.get("status"))


def test_the_spark_operator_watches_the_platform_namespace(live):
    args = [a for d in live.items("deployments", namespace=live.operator_namespace)
            for c in d["spec"]["template"]["spec"]["containers"] for a in c.get("args", [])
            if a.startswith("--namespaces=")]
    assert args, "no spark-operator controller (--namespaces=...) found"
    assert any(live.namespace in a.removeprefix("--namespaces=").split(",") for a in args), args


def test_kafka_is_ready(strimzi):
    assert condition(strimzi.get("kafka", strimzi.cluster)) == "True"


@pytest.mark.parametrize("role", ["controller", "broker"])
def test_three_pods_of_each_role_are_running(strimzi, role):
    found = pods(strimzi, role)
    assert len(found) == 3, [p["metadata"]["name"] for p in found]
    for pod in found:
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        assert all(c["ready"] for c in pod["status"]["containerStatuses"]), pod["metadata"]["name"]


def test_brokers_keep_their_log_on_the_persistent_volume(strimzi, monkeypatch):
    # testinfra runs the `kubectl` of PATH: the one the checks use comes first.
    if os.path.isabs(strimzi.kubectl):
        monkeypatch.setenv("PATH", f"{os.path.dirname(strimzi.kubectl)}{os.pathsep}{os.environ['PATH']}")
    for pod in pods(strimzi, "broker"):
        host = testinfra.get_host(strimzi.testinfra_url(pod["metadata"]["name"], "kafka"))
        assert host.file("/var/lib/kafka/data-0").is_directory
        assert host.mount_point("/var/lib/kafka/data-0").exists


def test_every_catalogue_topic_is_ready_with_its_partitions(strimzi, cat):
    topics = {t["spec"]["topicName"]: t for t in strimzi.items("kafkatopics")}
    for t in cat["topics"]:
        assert t["name"] in topics, t["name"]
        assert condition(topics[t["name"]]) == "True", t["name"]
        assert topics[t["name"]]["spec"]["partitions"] == t["partitions"]


def test_every_job_user_is_ready_with_its_secret(strimzi, cat):
    users = {u["metadata"]["name"]: u for u in strimzi.items("kafkausers")}
    secrets = {s["metadata"]["name"] for s in strimzi.items("secrets")}
    for job in cat["jobs"]:
        name = k8s_name(job["name"])
        assert condition(users[name]) == "True", name
        assert name in secrets, name


def test_connect_is_ready_and_every_connector_runs(strimzi, cat):
    assert condition(strimzi.get("kafkaconnect", strimzi.connect)) == "True"
    connectors = {c["metadata"]["name"]: c for c in strimzi.items("kafkaconnectors")}
    for c in cat["connectors"]:
        status = connectors[c["name"]].get("status", {}).get("connectorStatus", {})
        assert status.get("connector", {}).get("state") == "RUNNING", (c["name"], status)
        assert all(t["state"] == "RUNNING" for t in status.get("tasks", [])), (c["name"], status)


def client_pod_specs(live) -> list[dict]:
    """The pod specs of the client jobs' Deployments and CronJobs."""
    return ([d["spec"]["template"]["spec"] for d in live.items("deployments", "-l", "kafka-patterns/job")]
            + [c["spec"]["jobTemplate"]["spec"]["template"]["spec"]
               for c in live.items("cronjobs", "-l", "kafka-patterns/job")])


def test_every_secret_the_jobs_read_exists(live):
    """Password and CA Secrets: the User Operator's, or the Kafka owner's (bring your own)."""
    specs = [a["spec"] for a in live.items("sparkapplications", "-l", "kafka-patterns/job")]
    specs += [a["spec"]["template"] for a in live.items("scheduledsparkapplications")]
    pods = client_pod_specs(live)
    containers = [s[role] for s in specs for role in ("driver", "executor")]
    containers += [c for p in pods for c in p["containers"]]
    wanted = {v["secret"]["secretName"] for s in specs + pods for v in s.get("volumes", []) if "secret" in v}
    wanted |= {e["valueFrom"]["secretKeyRef"]["name"] for c in containers
               for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})}
    assert wanted
    secrets = {s["metadata"]["name"] for s in live.items("secrets")}
    assert not wanted - secrets, f"missing Secrets in {live.namespace}: {sorted(wanted - secrets)}"


def test_the_streaming_spark_applications_run(live):
    apps = {a["metadata"]["name"]: a for a in live.items("sparkapplications", "-l", "kafka-patterns/job")
            if not a["metadata"].get("ownerReferences")}
    assert live.streaming_jobs
    for job in live.streaming_jobs:
        assert k8s_name(job) in apps, f"no SparkApplication {k8s_name(job)}"
        state = apps[k8s_name(job)].get("status", {}).get("applicationState", {}).get("state")
        assert state == "RUNNING", (job, state)


def test_the_scheduled_spark_applications_are_scheduled(live):
    scheduled = {a["metadata"]["name"]: a for a in live.items("scheduledsparkapplications")}
    for job in live.scheduled_jobs:
        assert k8s_name(job) in scheduled, f"no ScheduledSparkApplication {k8s_name(job)}"
        status = scheduled[k8s_name(job)].get("status", {})
        assert status.get("scheduleState") == "Scheduled", (job, status)
        assert status.get("nextRun"), (job, status)


def test_the_client_jobs_run(live):
    """Each client job: a Deployment with every pod available, or replay's CronJob."""
    deployments = {d["metadata"]["name"]: d for d in live.items("deployments", "-l", "kafka-patterns/job")}
    cronjobs = {c["metadata"]["name"] for c in live.items("cronjobs", "-l", "kafka-patterns/job")}
    for job in live.client_jobs:
        name = k8s_name(job)
        assert name in deployments or name in cronjobs, f"no Deployment or CronJob {name}"
        if name in deployments:
            d = deployments[name]
            assert d.get("status", {}).get("availableReplicas", 0) == d["spec"]["replicas"], (job, d.get("status"))

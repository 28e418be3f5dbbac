"""The local/VM path (Ansible) and the Kubernetes path (the chart) derive the same
topics, partitions, replication factors, topic configs, guarantee settings and job
ACLs from the one catalogue, and every job a pattern runs locally has its runtime on
Kubernetes.

The Ansible side is what Ansible itself resolves: the group_vars that load the
catalogue and the kafka_topics role's defaults, fed through the kafka_topics module's
own desired_topics(), and the kafka_access role's kafka_users module (the SCRAM users
and ACLs the local cluster's StandardAuthorizer enforces; tests/infra/test_pods_access.py
checks that the running cluster holds exactly those). The Kubernetes side is the
rendered KafkaTopics, Kafka and KafkaUsers."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from manifests import (
    BYO_VARIANTS,
    ROOT,
    STRIMZI_VARIANTS,
    by_name,
    catalogue_acls,
    connect_name,
    k8s_name,
    load_module,
    one,
    user_acls,
    values_of,
)

from helpers import LOCAL_INVENTORY, VENV_BIN, ansible_env, role_dir

ANSIBLE_DIR = ROOT / "ansible"
# The variables the local path hands to the kafka_topics module and the broker config.
RESOLVE = ('{{ {"topics": kafka_topics_list,'
           ' "default_replication_factor": kafka_topics_default_replication_factor | int,'
           ' "replication_factor": kafka_replication_factor | int,'
           ' "min_insync_replicas": kafka_min_insync_replicas | int,'
           ' "jobs": platform_catalogue.jobs, "users": platform_catalogue.users | default([])} | to_json }}')


@pytest.fixture(scope="module")
def local_path() -> dict[str, Any]:
    """Ansible's view: group_vars of the playbooks + the kafka_topics role defaults."""
    cmd = [str(VENV_BIN / "ansible"), "kafka-1", "-i", str(LOCAL_INVENTORY),
           "--playbook-dir", str(ANSIBLE_DIR / "playbooks"),
           "-e", "@" + str(role_dir("kafka_topics") / "defaults" / "main.yml"),
           "-m", "ansible.builtin.debug", "-a", "msg=" + RESOLVE]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ansible_env(), cwd=ANSIBLE_DIR, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(json.loads(proc.stdout.split("=>", 1)[1])["msg"])


@pytest.fixture(scope="module")
def local_topics(local_path) -> dict[str, dict[str, Any]]:
    module = load_module("kp_kafka_topics", role_dir("kafka_topics") / "library" / "kafka_topics.py")
    return module.desired_topics(local_path)


def kubernetes_topics(objects) -> dict[str, dict[str, Any]]:
    return {t["spec"]["topicName"]: {"partitions": t["spec"]["partitions"],
                                     "replication_factor": t["spec"]["replicas"],
                                     "config": {k: str(v) for k, v in t["spec"].get("config", {}).items()}}
            for t in by_name(objects, "KafkaTopic").values()}


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_both_paths_create_the_same_topics_with_the_same_settings(local_topics, rendered, variant):
    assert local_topics, "the local path creates the catalogue's topics"
    assert kubernetes_topics(rendered[variant]) == local_topics


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_both_paths_apply_the_same_guarantee_settings(local_path, rendered, variant):
    config = one(rendered[variant], "Kafka")["spec"]["kafka"]["config"]
    assert config["default.replication.factor"] == local_path["replication_factor"]
    assert config["min.insync.replicas"] == local_path["min_insync_replicas"]
    assert local_path["default_replication_factor"] == local_path["replication_factor"]


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_both_paths_give_every_job_the_same_acls(local_path, rendered, variant):
    # The catalogue rule over the jobs Ansible sees; on Kubernetes the KafkaUsers' ACLs.
    users = by_name(rendered[variant], "KafkaUser")
    assert local_path["jobs"]
    for job in local_path["jobs"]:
        assert user_acls(users[k8s_name(job["name"])]) == catalogue_acls(job), job["name"]


@pytest.fixture(scope="module")
def local_users(local_path) -> dict[str, set[tuple[str, str | None, str, str]]]:
    """The SCRAM users and ACLs the kafka_access role creates on the local cluster: one
    per job, then the catalogue's other users (harness, operator, canary, ...)."""
    module = load_module("kp_kafka_users", role_dir("kafka_access") / "library" / "kafka_users.py")
    return module.desired_users(local_path["jobs"], local_path["users"])


def test_the_local_users_follow_the_charts_naming(local_path, local_users):
    jobs = sorted(k8s_name(job["name"]) for job in local_path["jobs"])
    assert sorted(set(local_users) - {u["name"] for u in local_path["users"]}) == jobs
    assert "admin" not in local_users, "admin is the super user, never a job"


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_the_local_acls_are_the_kafka_users_acls_user_by_user(local_path, local_users, rendered, variant):
    # The chart's users: every job's, and the catalogue users its canary and lag exporter
    # run as; Connect's is its own (Strimzi Connect's internal topics are named after it).
    connect = connect_name(rendered[variant])
    chart = {name: user_acls(user) for name, user in by_name(rendered[variant], "KafkaUser").items()
             if name != connect}
    jobs = {k8s_name(job["name"]) for job in local_path["jobs"]}
    assert jobs <= set(chart)
    assert set(chart) <= set(local_users)
    for name, acls in chart.items():
        assert acls == local_users[name], name


@pytest.fixture(scope="module")
def pods_endpoints() -> dict[str, Any]:
    """Where the local inventory's Kafka (SASL_SSL listeners) and PostgreSQL wait for pods."""
    resolve = ('{{ {"bootstrap": kafka_access_bootstrap_export | trim,'
               ' "pg_host": kafka_pods_host, "pg_port": hostvars["postgres-1"].postgresql_port | int,'
               ' "pg_listen": hostvars["postgres-1"].postgresql_listen_addresses} | to_json }}')
    cmd = [str(VENV_BIN / "ansible"), "kafka-1", "-i", str(LOCAL_INVENTORY),
           "--playbook-dir", str(ANSIBLE_DIR / "playbooks"),
           "-e", "@" + str(role_dir("kafka_access") / "defaults" / "main.yml"),
           "-m", "ansible.builtin.debug", "-a", "msg=" + resolve]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ansible_env(), cwd=ANSIBLE_DIR, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(json.loads(proc.stdout.split("=>", 1)[1])["msg"])


@pytest.mark.parametrize("variant", BYO_VARIANTS)
def test_a_chart_on_the_local_kubernetes_uses_the_listeners_the_local_cluster_has(pods_endpoints, variant):
    values = values_of(variant)
    assert values["kafka"]["external"]["bootstrap"] == pods_endpoints["bootstrap"]
    assert values["kafka"]["external"]["saslMechanism"] == "SCRAM-SHA-512"
    assert values["postgres"]["host"] == pods_endpoints["pg_host"]
    assert pods_endpoints["pg_host"] in pods_endpoints["pg_listen"].split(",")
    assert int(values["postgres"]["port"]) == pods_endpoints["pg_port"]


# Where each engine's jobs run on Kubernetes: spark-operator applications, or plain pods.
RUNTIME_KINDS = {"spark": {"SparkApplication", "ScheduledSparkApplication"}, "client": {"Deployment", "CronJob"}}


def test_every_job_of_every_pattern_has_one_runtime_on_kubernetes(rendered, cat):
    # values.yaml includes every job (spark.jobs.include and clients.jobs.include empty).
    objects = rendered["default"]
    engines = {j["name"]: j["engine"] for j in cat["jobs"]}
    runtimes: dict[str, list[str]] = {}
    for o in objects:
        if o["kind"] in set().union(*RUNTIME_KINDS.values()) and "kafka-patterns/job" in o["metadata"]["labels"]:
            runtimes.setdefault(o["metadata"]["labels"]["kafka-patterns/job"], []).append(o["kind"])
    for pattern in cat["patterns"]:
        for job in pattern["jobs"]:
            assert len(runtimes.get(job, [])) == 1, (pattern["name"], job, runtimes.get(job))
            assert runtimes[job][0] in RUNTIME_KINDS[engines[job]], (job, runtimes[job])

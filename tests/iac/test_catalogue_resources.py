"""The catalogue as Strimzi resources: a KafkaTopic per topic, a KafkaUser with
least-privilege ACLs per job (and per catalogue user the chart runs a process as), Kafka
Connect built with the pinned Debezium plugins and a KafkaConnector per catalogue
connector."""

from __future__ import annotations

import pytest
from manifests import (
    CONNECT_VARIANTS,
    STRIMZI_VARIANTS,
    by_name,
    catalogue_acls,
    connect_name,
    kinds,
    objects_of,
    one,
    resources_of,
    user_acls,
    values_of,
)

from kafka_patterns.config import acls

CONNECT_ANNOTATION = "strimzi.io/use-connector-resources"


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_every_catalogue_topic_is_a_kafka_topic_with_its_settings(rendered, cat, variant):
    cluster = one(rendered[variant], "Kafka")["metadata"]["name"]
    assert len(kinds(rendered[variant], "KafkaTopic")) == len(cat["topics"])
    for t, kt in resources_of(rendered[variant], "KafkaTopic", cat["topics"]):
        assert kt["metadata"]["labels"]["strimzi.io/cluster"] == cluster
        assert kt["spec"]["topicName"] == t["name"]
        assert kt["spec"]["partitions"] == t["partitions"]
        assert kt["spec"]["replicas"] == t.get("replicationFactor", cat["cluster"]["replicationFactor"])
        assert kt["spec"].get("config", {}) == (t.get("config") or {})


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_every_job_has_a_kafka_user_with_exactly_its_acls(rendered, cat, variant):
    cluster = one(rendered[variant], "Kafka")["metadata"]["name"]
    for job, user in resources_of(rendered[variant], "KafkaUser", cat["jobs"]):
        assert user["metadata"]["labels"]["strimzi.io/cluster"] == cluster
        assert user["spec"]["authentication"] == {"type": "scram-sha-512"}
        assert user["spec"]["authorization"]["type"] == "simple"
        assert user_acls(user) == catalogue_acls(job), job["name"]


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_no_user_gets_more_than_least_privilege(rendered, cat, variant):
    connect = connect_name(rendered[variant])
    # The catalogue's users that are not jobs (the canary's, the lag exporter's): what the
    # catalogue declares (tests/iac/test_monitoring.py), at most a view of every topic,
    # group and the cluster (Describe, DescribeConfigs: metadata, no records), and their
    # own topics and groups by prefix.
    others = {u["name"] for u in cat["users"]}
    # The users of clients outside the cluster (the tests' harness on the local Kubernetes):
    # the catalogue's ACLs as they are, which the local path gives the same user.
    external = values_of(variant)["kafka"]["externalListener"]
    outside = set(external["users"]) if external["enabled"] else set()
    declared = {u["name"]: u for u in cat["users"]}
    for name, user in by_name(rendered[variant], "KafkaUser").items():
        if name in outside:
            assert user_acls(user) == acls.user_acls(declared[name], cat["jobs"]), name
            assert all(op != "All" and rtype != "cluster" for rtype, _, _, op in user_acls(user)), name
            continue
        if name in others:
            for rtype, rname, pattern, op in user_acls(user):
                assert op != "All", (name, rtype, rname, op)
                if rtype == "cluster" or rname == "*":
                    assert op in ("Describe", "DescribeConfigs"), (name, rtype, rname, op)
                else:
                    assert pattern == "literal" or rname == name, (name, rtype, rname)
            continue
        for rtype, rname, pattern, op in user_acls(user):
            assert op != "All" and rname != "*", (name, rtype, rname, op)
            assert rtype != "cluster" or op == "IdempotentWrite", (name, rtype, op)
            # Prefixed ACLs: Connect's (its internal topics and the CDC topics) and a
            # job's groups and transactional ids, which carry the job's name.
            named_after_job = rtype in ("group", "transactionalId") and rname == name
            assert pattern == "literal" or name == connect or named_after_job, (name, rtype, rname)


@pytest.mark.parametrize("variant", CONNECT_VARIANTS)
def test_kafka_connect_uses_connector_resources_and_builds_the_pinned_debezium(rendered, versions, variant):
    kafka = one(rendered[variant], "Kafka")
    connect = one(rendered[variant], "KafkaConnect")
    assert connect["metadata"]["annotations"][CONNECT_ANNOTATION] == "true"
    spec = connect["spec"]
    port = kafka["spec"]["kafka"]["listeners"][0]["port"]
    assert spec["bootstrapServers"] == f"{kafka['metadata']['name']}-kafka-bootstrap:{port}"
    assert spec["authentication"]["type"] == "scram-sha-512"
    assert spec["authentication"]["username"] in by_name(rendered[variant], "KafkaUser")
    assert spec["tls"]["trustedCertificates"][0]["secretName"] == f"{kafka['metadata']['name']}-cluster-ca-cert"
    if "image" in spec:
        # A prebuilt image with the plugins (connect.image, its pins filled in): no build.
        assert "build" not in spec and "{{" not in spec["image"], spec
        assert spec["image"] == values_of(variant)["connect"]["image"].replace(
            "{{ .Values.strimzi_version }}", versions["strimzi_version"]).replace(
            "{{ .Values.kafka_version }}", versions["kafka_version"])
        return
    assert spec["build"]["output"]["type"] == "docker" and spec["build"]["output"]["image"]
    artifacts = {(a["group"], a["artifact"], a["version"])
                 for plugin in spec["build"]["plugins"] for a in plugin["artifacts"] if a["type"] == "maven"}
    assert artifacts == {("io.debezium", "debezium-connector-postgres", versions["debezium_version"]),
                         ("io.debezium", "debezium-connector-jdbc", versions["debezium_jdbc_version"])}


def connectors_of(variant: str, cat: dict) -> list[dict]:
    """The catalogue's connectors (unless the variant's values replace the list), each
    with the variant's connect.connectorConfig over its config."""
    values = values_of(variant)
    overrides = values.get("connect", {}).get("connectorConfig", {})
    return [{**c, "config": {**c["config"], **overrides.get(c["name"], {})}}
            for c in values.get("connectors", cat["connectors"])]


def test_the_strimzi_release_has_a_slot_a_publication_and_a_replica_of_its_own(rendered, cat):
    """Two releases' Debezium sources on one PostgreSQL must not share a slot (each would
    consume the other's changes), nor should their sinks write one table."""
    mine = {kc["metadata"]["name"]: kc["spec"]["config"] for kc in kinds(rendered["local-strimzi"], "KafkaConnector")}
    theirs = {c["name"]: c["config"] for c in cat["connectors"]}
    assert mine.keys() == theirs.keys()
    for name, config in mine.items():
        if "slot.name" in theirs[name]:  # a source; the host's publication is Debezium's default
            assert config["slot.name"] != theirs[name]["slot.name"], name
            assert config["publication.name"] != theirs[name].get("publication.name", "dbz_publication"), name
        if "table.name.format" in theirs[name]:  # a sink
            assert config["table.name.format"] != theirs[name]["table.name.format"], name


@pytest.mark.parametrize("variant", CONNECT_VARIANTS)
def test_a_connect_worker_is_given_time_to_scan_its_plugins_before_liveness_counts(rendered, variant):
    """Strimzi's default liveness probe (15 s, then 3 failures 10 s apart) restarted a
    worker in a loop on a busy node: /health answers only once the plugins are scanned."""
    spec = one(rendered[variant], "KafkaConnect")["spec"]
    live = spec["livenessProbe"]
    assert live["initialDelaySeconds"] + live["periodSeconds"] * live["failureThreshold"] >= 180, live
    assert spec["readinessProbe"]["initialDelaySeconds"] < live["initialDelaySeconds"]


def test_a_user_that_replays_dead_letters_gets_the_same_acls_from_the_chart_as_from_python(helm, cat):
    # The chart's kp.replayAcls and acls.replay_acls are two implementations of one rule.
    replayers = [u for u in cat["users"] if u.get("replaysDeadLetters")]
    assert replayers, "no catalogue user replays dead letters"
    names = ",".join(u["name"] for u in replayers)
    users = by_name(objects_of(helm, "kafka.externalListener.enabled=true",
                               f"kafka.externalListener.users={{{names}}}"), "KafkaUser")
    for u in replayers:
        assert user_acls(users[u["name"]]) == acls.user_acls(u, cat["jobs"]), u["name"]
        assert acls.replay_acls(cat["jobs"]) <= user_acls(users[u["name"]]), u["name"]


@pytest.mark.parametrize("variant", CONNECT_VARIANTS)
def test_every_catalogue_connector_is_a_kafka_connector(rendered, cat, variant):
    connect = one(rendered[variant], "KafkaConnect")["metadata"]["name"]
    assert len(kinds(rendered[variant], "KafkaConnector")) == len(connectors_of(variant, cat))
    for c, kc in resources_of(rendered[variant], "KafkaConnector", connectors_of(variant, cat)):
        assert kc["metadata"]["labels"]["strimzi.io/cluster"] == connect
        assert kc["spec"]["class"] == c["class"]
        assert kc["spec"]["config"].items() >= {k: v for k, v in c["config"].items()}.items()
        # Passwords come from the worker's environment, never from the manifest.
        passwords = [v for k, v in kc["spec"]["config"].items() if k.endswith("password")]
        assert passwords and all(v.startswith("${env:") for v in passwords), c["name"]


@pytest.mark.parametrize("variant", CONNECT_VARIANTS)
def test_the_connect_user_may_do_what_its_connectors_do(rendered, cat, variant):
    connect = one(rendered[variant], "KafkaConnect")
    acls = user_acls(by_name(rendered[variant], "KafkaUser")[connect["metadata"]["name"]])
    name = connect["metadata"]["name"]
    for topic_key in ("configStorageTopic", "offsetStorageTopic", "statusStorageTopic"):
        assert connect["spec"][topic_key].startswith(name + "-")
    assert ("topic", name + "-", "prefix", "Write") in acls
    assert ("group", connect["spec"]["groupId"], "literal", "Read") in acls
    for c in connectors_of(variant, cat):
        if "topic.prefix" in c["config"]:
            assert ("topic", c["config"]["topic.prefix"] + ".", "prefix", "Write") in acls
        for topic in filter(None, c["config"].get("topics", "").split(",")):
            assert ("topic", topic.strip(), "literal", "Read") in acls
            assert ("group", f"connect-{c['name']}", "literal", "Read") in acls

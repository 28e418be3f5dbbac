"""The Kafka cluster the chart renders: two node pools (or one of combined nodes), the catalogue's guarantee
settings, rack awareness, one TLS + SCRAM-SHA-512 listener, simple authorization."""

from __future__ import annotations

import pytest
from manifests import COMBINED_POOL_VARIANTS, SEPARATE_POOL_VARIANTS, STRIMZI_VARIANTS, by_name, kinds, one, values_of


@pytest.mark.parametrize("variant", SEPARATE_POOL_VARIANTS)
def test_kafka_has_3_controllers_and_3_brokers_on_persistent_storage(rendered, variant):
    kafka = one(rendered[variant], "Kafka")
    pools = kinds(rendered[variant], "KafkaNodePool")
    assert sorted(tuple(p["spec"]["roles"]) for p in pools) == [("broker",), ("controller",)]
    for pool in pools:
        assert pool["metadata"]["labels"]["strimzi.io/cluster"] == kafka["metadata"]["name"]
        assert pool["spec"]["replicas"] == 3
        storage = pool["spec"]["storage"]
        volumes = storage["volumes"] if storage["type"] == "jbod" else [storage]
        assert volumes and all(v["type"] == "persistent-claim" for v in volumes), pool["metadata"]["name"]
        assert not any(v.get("deleteClaim") for v in volumes), "a teardown must not delete Kafka's data"
        assert any(v.get("kraftMetadata") == "shared" for v in volumes)


@pytest.mark.parametrize("variant", COMBINED_POOL_VARIANTS)
def test_a_combined_pool_runs_3_nodes_with_both_kraft_roles_on_persistent_storage(rendered, variant):
    (pool,) = kinds(rendered[variant], "KafkaNodePool")
    assert pool["metadata"]["name"] == "dual-role"
    assert sorted(pool["spec"]["roles"]) == ["broker", "controller"] and pool["spec"]["replicas"] == 3
    (volume,) = pool["spec"]["storage"]["volumes"]
    assert volume["type"] == "persistent-claim" and volume["deleteClaim"] is False
    assert volume["kraftMetadata"] == "shared"
    assert pool["metadata"]["labels"]["strimzi.io/cluster"] == one(rendered[variant], "Kafka")["metadata"]["name"]


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_kafka_has_the_catalogue_guarantee_settings(rendered, cat, variant):
    config = one(rendered[variant], "Kafka")["spec"]["kafka"]["config"]
    rf, isr = cat["cluster"]["replicationFactor"], cat["cluster"]["minInsyncReplicas"]
    assert (rf, isr) == (3, 2)
    assert config["default.replication.factor"] == rf
    assert config["min.insync.replicas"] == isr
    assert config["unclean.leader.election.enable"] is False
    assert config["offsets.topic.replication.factor"] == rf
    assert config["transaction.state.log.replication.factor"] == rf
    assert config["transaction.state.log.min.isr"] == isr
    assert config["auto.create.topics.enable"] is False


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_kafka_is_rack_aware(rendered, variant):
    rack = one(rendered[variant], "Kafka")["spec"]["kafka"]["rack"]
    assert rack["type"] in ("topology-label", "environment-variable")
    assert rack.get("topologyKey") or rack.get("envVarName")


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_every_listener_is_tls_with_scram_sha_512(rendered, variant):
    spec = one(rendered[variant], "Kafka")["spec"]
    listeners = spec["kafka"]["listeners"]
    external = values_of(variant)["kafka"]["externalListener"]
    # The jobs' listener inside the cluster, and the one for outside clients where enabled.
    expected = ["internal"] + ([external["type"]] if external["enabled"] else [])
    assert [listener["type"] for listener in listeners] == expected
    for listener in listeners:
        assert listener["tls"] is True
        assert listener["authentication"] == {"type": "scram-sha-512"}
    assert spec["kafka"]["authorization"] == {"type": "simple"}
    # The operators that turn KafkaTopic and KafkaUser resources into topics and users.
    assert set(spec["entityOperator"]) >= {"topicOperator", "userOperator"}


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_kafka_runs_the_pinned_kafka_version(rendered, versions, variant):
    assert one(rendered[variant], "Kafka")["spec"]["kafka"]["version"] == versions["kafka_version"]
    for connect in kinds(rendered[variant], "KafkaConnect"):
        assert connect["spec"]["version"] == versions["kafka_version"]


def test_prod_spreads_pods_over_zones_with_disruption_budgets(rendered):
    prod = rendered["prod"]
    kafka = one(prod, "Kafka")
    assert kafka["spec"]["kafka"]["template"]["podDisruptionBudget"] == {"maxUnavailable": 1}
    for pool in kinds(prod, "KafkaNodePool"):
        spread = pool["spec"]["template"]["pod"]["topologySpreadConstraints"]
        assert spread[0]["whenUnsatisfiable"] == "DoNotSchedule"
        assert spread[0]["labelSelector"]["matchLabels"]["strimzi.io/pool-name"] == pool["metadata"]["name"]
    connect = one(prod, "KafkaConnect")
    assert connect["spec"]["replicas"] >= 2
    assert connect["spec"]["template"]["podDisruptionBudget"] == {"maxUnavailable": 1}
    assert connect["spec"]["template"]["pod"]["topologySpreadConstraints"]


def test_prod_gives_brokers_more_than_dev(rendered):
    def broker(variant):
        return by_name(rendered[variant], "KafkaNodePool")["broker"]["spec"]

    dev, prod = broker("dev"), broker("prod")
    assert int(prod["storage"]["volumes"][0]["size"].removesuffix("Gi")) > \
        int(dev["storage"]["volumes"][0]["size"].removesuffix("Gi"))
    assert int(prod["resources"]["requests"]["memory"].removesuffix("Gi")) > \
        int(dev["resources"]["requests"]["memory"].removesuffix("Gi"))
    assert "template" not in dev and "template" not in one(rendered["dev"], "Kafka")["spec"]["kafka"]

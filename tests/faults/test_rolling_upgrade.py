"""`make upgrade` under load on the running cluster: every node rolled to the next Kafka
(versions.yml's kafka_upgrade_test_version) and, not finalized, back to kafka_version,
one node at a time, while Kafka's VerifiableProducer writes acks=all with idempotence
and the delivery canary runs. Nothing acknowledged may be lost or duplicated; the
longest produce stall and the canary's counts are reported (pattern_harness.chaos).
`make test-chaos` runs the same scenario on the hosts topology. And the refusal: a
release older than the cluster's finalized metadata.version is refused before any node
is touched."""

from __future__ import annotations

import pytest

from helpers import run_day2_operation
from kafka_patterns.config import inventory
from kafka_patterns.config.catalogue import versions
from pattern_harness import broker_faults, chaos, kafka_tool

SCENARIO = "rolling upgrade and back (make upgrade)"


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_an_upgrade_and_its_way_back_lose_nothing_acknowledged():
    run_day2_operation(SCENARIO, "the upgrade")


def test_a_kafka_older_than_the_finalized_metadata_version_is_refused_before_any_node_moves():
    cluster = inventory.load()
    pins = versions()
    older = pins["kafka_refused_test_version"]
    pids = {n.name: broker_faults.node_pid(n) for n in cluster.nodes}
    finalized = kafka_tool.features(cluster.bootstrap_servers)["metadata.version"]["finalized"]
    with pytest.raises(chaos.PlaybookFailed) as failed:
        chaos.playbook("upgrade.yml", "-e", f"kafka_version={older}")
    log = failed.value.log
    out = log.read_text()
    assert f"Kafka {older} cannot run this cluster: its metadata.version was finalized at level" in out, log
    assert "newer than Kafka " + older + "'s" in out, log
    # Nothing moved: the same processes, on the same release, the same metadata.version.
    assert {n.name: broker_faults.node_pid(n) for n in cluster.nodes} == pids
    assert set(chaos.node_versions(cluster).values()) == {pins["kafka_version"]}
    assert kafka_tool.features(cluster.bootstrap_servers)["metadata.version"]["finalized"] == finalized

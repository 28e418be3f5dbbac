"""A Kafka node killed under the running monitoring (role monitoring): the alerts that
describe it fire in Prometheus, and resolve once the node is back. Meanwhile the
delivery canary service, which runs all along, counts nothing lost.

    KafkaNodeDown              the node's metrics endpoint stops answering (for 30s)
    UnderReplicatedPartitions  the surviving leaders report partitions missing a replica (for 1m)
"""

from __future__ import annotations

import pytest

from kafka_patterns.clients import kafka
from kafka_patterns.clients.prometheus import api, firing, instant
from pattern_harness import broker_faults

# The cluster-health alerts a node's loss may fire (group kafka of alerts.yml). Others may
# fire for reasons of their own meanwhile: ConsumerGroupLagGrowing for the earlier tests'
# abandoned groups, whose topics the later tests keep writing to.
CLUSTER_ALERTS = {"KafkaNodeDown", "UnderReplicatedPartitions", "OfflinePartitions", "UnderMinIsrPartition",
                  "AbnormalControllerState"}
FIRE_TIMEOUT = 240  # ISR shrink (replica.lag.time.max.ms 30 s), the alerts' `for`, 15 s scrapes and evaluations
RESOLVE_TIMEOUT = 300  # the node's start, its replicas catching up, an evaluation


def cluster_alerts_firing(prometheus: str) -> list[dict]:
    return [a for a in firing(prometheus) if a["labels"]["alertname"] in CLUSTER_ALERTS]


def canary_total(prometheus: str, outcome: str) -> float:
    return instant(prometheus, f"sum(kafka_patterns_canary_records_{outcome}_total)") or 0.0


@pytest.fixture(scope="module")
def prometheus(cluster) -> str:
    if cluster.prometheus_url is None:
        pytest.skip("the inventory has no monitoring host")
    return cluster.prometheus_url


@pytest.mark.slow
def test_a_killed_node_fires_its_alerts_which_resolve_when_it_is_back(cluster, prometheus):
    # An earlier fault's alerts (a node restarted by another test) resolve first.
    kafka.wait_until(lambda: not cluster_alerts_firing(prometheus), timeout=RESOLVE_TIMEOUT, interval=2,
                       what="no cluster alert firing before the fault")
    node = next(n for n in cluster.nodes if n.broker_port)
    target = next(t for t in api(prometheus, "targets")["activeTargets"]
                  if t["labels"]["job"] == "kafka" and t["labels"].get("node") == node.name)
    instance = target["labels"]["instance"]
    acked_before, lost_before = canary_total(prometheus, "acked"), canary_total(prometheus, "lost")

    def alerts_now() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for a in firing(prometheus):
            out.setdefault(a["labels"]["alertname"], set()).add(a["labels"].get("instance", ""))
        return out

    broker_faults.kill9(node)
    try:
        fired = kafka.wait_until(
            lambda: (now := alerts_now()).get("KafkaNodeDown") == {instance}
            and now.get("UnderReplicatedPartitions", set()) - {instance} and now,
            timeout=FIRE_TIMEOUT, interval=2, what=f"KafkaNodeDown for {instance} and UnderReplicatedPartitions")
    finally:
        broker_faults.start(node)
    print(f"{node.name} killed: firing {fired}")
    kafka.wait_until(lambda: not cluster_alerts_firing(prometheus), timeout=RESOLVE_TIMEOUT, interval=2,
                       what=f"every cluster alert to resolve after {node.name} came back")
    # The canary's grace period (30 s) has passed since the kill: a loss would be counted.
    kafka.wait_until(lambda: canary_total(prometheus, "acked") > acked_before, timeout=60, interval=1,
                       what="the canary's acks to go on")
    lost = canary_total(prometheus, "lost") - lost_before
    assert lost == 0, f"the canary service lost {lost:.0f} records across the kill of {node.name}"

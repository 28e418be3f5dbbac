"""Broker faults on the Kafka the Strimzi operator runs on the local Kubernetes
(values-local-strimzi.yaml), judged by the delivery canary that writes through it with
acks=all and reads every probe back (its counters, scraped from its pod): a Kafka pod
deleted mid-stream, and a change of the Kafka CR's broker config, which the operator
rolls out one pod at a time. No acked probe may be lost; the longest stall of the
canary's reads is reported."""

from __future__ import annotations

import json
import time

import pod_metrics
import pytest
import yaml

from helpers import ROOT
from kafka_patterns.clients.kafka import wait_until

pytestmark = pytest.mark.slow

NAMESPACE = "kafka-patterns-strimzi"
CATALOGUE = yaml.safe_load((ROOT / "catalogue" / "catalogue.yaml").read_text())
CLUSTER = CATALOGUE["cluster"]["name"]
VALUES = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values-local-strimzi.yaml").read_text())
NODES = VALUES["kafka"]["brokers"]["replicas"]
# An acked probe unread for this long counts as lost (the chart's monitoring.canary.graceSeconds).
GRACE = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values.yaml").read_text())["monitoring"]["canary"][
    "graceSeconds"]
C = "kafka_patterns_canary_records_"


def canary(kubectl) -> dict[str, float]:
    return pod_metrics.scrape(kubectl, NAMESPACE, "canary")


def kafka_pods(kubectl) -> dict[str, dict]:
    pods = json.loads(kubectl("get", "pods", "-n", NAMESPACE, "-o", "json", "-l",
                              f"strimzi.io/cluster={CLUSTER},strimzi.io/kind=Kafka,strimzi.io/broker-role=true",
                              check=True).stdout)["items"]
    return {p["metadata"]["name"]: p for p in pods}


def is_ready(pod: dict) -> bool:
    return (not pod["metadata"].get("deletionTimestamp")
            and all(c.get("ready") for c in pod["status"].get("containerStatuses", [])) and
            bool(pod["status"].get("containerStatuses")))


class Reads:
    """Samples the canary's consumed counter once a second while a fault plays out: the
    longest stretch without a new probe read is the stall a client saw."""

    def __init__(self, kubectl) -> None:
        self.kubectl = kubectl
        self.last = canary(kubectl)[f"{C}consumed_total"]
        self.last_change = time.monotonic()
        self.longest_stall = 0.0

    def sample(self) -> None:
        try:
            consumed = canary(self.kubectl)[f"{C}consumed_total"]
        except Exception:  # the scrape itself may time out on a busy node: no new reading
            return
        now = time.monotonic()
        if consumed > self.last:
            self.longest_stall = max(self.longest_stall, now - self.last_change)
            self.last, self.last_change = consumed, now


@pytest.fixture
def steady(kubectl) -> dict[str, float]:
    """The canary delivering (probes read since the last scrape) and the cluster Ready: its
    counters before the fault."""
    kubectl("wait", "-n", NAMESPACE, f"kafka/{CLUSTER}", "--for=condition=Ready", "--timeout=600s", timeout=620,
            check=True)
    first = canary(kubectl)
    return wait_until(
        lambda: (m := canary(kubectl))[f"{C}consumed_total"] > first[f"{C}consumed_total"] and m,
        timeout=180, interval=3, what="the canary reading its probes")


def after_the_grace(kubectl, before: dict[str, float], reads: Reads) -> dict[str, float]:
    """The counters once every probe acked by the end of the fault had its grace period,
    and reads went on past it."""
    acked_at_end = canary(kubectl)[f"{C}acked_total"]
    deadline = time.monotonic() + GRACE + 10
    while time.monotonic() < deadline:
        reads.sample()
        time.sleep(1)
    last: dict[str, float] = {}

    def accounted_for():
        # Every probe acked by the end of the fault read back or judged lost (the assertion
        # after tells which); a reader still catching up on a busy node is neither yet.
        try:
            last.update(canary(kubectl))
        except Exception:  # the scrape timed out on a busy node: ask again
            return False
        return last[f"{C}consumed_total"] + last[f"{C}lost_total"] >= acked_at_end and dict(last)

    try:
        return wait_until(accounted_for, timeout=300, interval=2,
                                  what=f"the canary reading or judging each of the {acked_at_end:.0f} probes acked")
    except TimeoutError as e:
        counters = {k.removeprefix(C): v for k, v in last.items() if k.startswith(C)}
        raise TimeoutError(f"{e}; its counters at the end: {counters}") from None


def test_a_kafka_pod_deleted_mid_stream_loses_no_acked_probe(kubectl, steady):
    victim = sorted(kafka_pods(kubectl))[1]
    old_uid = kafka_pods(kubectl)[victim]["metadata"]["uid"]
    reads = Reads(kubectl)
    kubectl("delete", "pod", victim, "-n", NAMESPACE, "--wait=false", check=True)

    def back():
        reads.sample()
        pod = kafka_pods(kubectl).get(victim)
        return pod is not None and pod["metadata"]["uid"] != old_uid and is_ready(pod)

    started = time.monotonic()
    wait_until(back, timeout=600, interval=1, what=f"{victim} recreated and Ready")
    recovered = time.monotonic() - started
    after = after_the_grace(kubectl, steady, reads)
    print(f"\npod {victim} deleted: Ready again after {recovered:.0f}s; canary acked "
          f"{after[f'{C}acked_total'] - steady[f'{C}acked_total']:.0f}, lost "
          f"{after[f'{C}lost_total'] - steady[f'{C}lost_total']:.0f}, duplicated "
          f"{after[f'{C}duplicated_total'] - steady[f'{C}duplicated_total']:.0f}; "
          f"longest stall of the reads {reads.longest_stall:.1f}s")
    assert after[f"{C}acked_total"] > steady[f"{C}acked_total"], "the canary acked nothing during the fault"
    assert after[f"{C}lost_total"] == steady[f"{C}lost_total"], after


def test_a_broker_config_change_rolls_the_pods_one_at_a_time_and_loses_no_acked_probe(kubectl, steady):
    """queued.max.requests is read-only in Kafka (not dynamic): the operator restarts every
    node to apply it, one at a time, each only when no partition would drop below min ISR."""
    kafka = json.loads(kubectl("get", "kafka", CLUSTER, "-n", NAMESPACE, "-o", "json", check=True).stdout)
    value = int(kafka["spec"]["kafka"]["config"].get("queued.max.requests", 500)) + 1
    uids = {name: p["metadata"]["uid"] for name, p in kafka_pods(kubectl).items()}
    reads = Reads(kubectl)
    kubectl("patch", "kafka", CLUSTER, "-n", NAMESPACE, "--type=merge",
            "-p", json.dumps({"spec": {"kafka": {"config": {"queued.max.requests": value}}}}), check=True)
    most_down = 0
    started = time.monotonic()

    def rolled():
        nonlocal most_down
        reads.sample()
        pods = kafka_pods(kubectl)
        most_down = max(most_down, NODES - sum(1 for p in pods.values() if is_ready(p)))
        return (len(pods) == NODES and all(is_ready(p) for p in pods.values())
                and all(p["metadata"]["uid"] != uids.get(name) for name, p in pods.items()))

    wait_until(rolled, timeout=1500, interval=1, what="every Kafka pod restarted with the new config")
    took = time.monotonic() - started
    after = after_the_grace(kubectl, steady, reads)
    print(f"\nrolling update (queued.max.requests={value}): {NODES} pods restarted in {took:.0f}s, at most "
          f"{most_down} not Ready at once; canary acked {after[f'{C}acked_total'] - steady[f'{C}acked_total']:.0f}, "
          f"lost {after[f'{C}lost_total'] - steady[f'{C}lost_total']:.0f}; longest stall of the reads "
          f"{reads.longest_stall:.1f}s")
    assert most_down <= 1, f"{most_down} Kafka pods were down at once"
    assert after[f"{C}lost_total"] == steady[f"{C}lost_total"], after

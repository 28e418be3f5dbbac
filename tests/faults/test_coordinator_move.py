"""The consumer-group lag exporter lives through a move of the group coordinators.

librdkafka's admin client crashes the process (SIGSEGV) when an OffsetFetch is answered
NOT_COORDINATOR (librdkafka issue 5040), so the exporter reads committed offsets with a
consumer of the group instead (lag_exporter.OffsetSource.committed). Coordinators move
when a node dies and again when the preferred-leader election hands its __consumer_offsets
partitions back, which the brokers run by themselves about 5 minutes after a restart and
this test at once. Checked against the admin client's way: the exporter crashed.
"""

from __future__ import annotations

import urllib.request

import pytest
from confluent_kafka import ElectionType, KafkaException, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from pattern_harness import broker_faults

GROUP = "canary"  # the canary service's group: it commits all along, the exporter reads it
OFFSETS = "__consumer_offsets"


def scrape(url: str) -> dict[str, float]:
    """One scrape of the exporter (it reads the offsets now): sample name and labels -> value."""
    with urllib.request.urlopen(url, timeout=120) as answer:
        text = answer.read().decode()
    return {f"{s.name}{sorted(s.labels.items())}": s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def offsets_partition() -> int:
    """The group's __consumer_offsets partition (Kafka's own placement: the group id's Java
    hashCode, Utils.abs, modulo the partitions); its leader is the group's coordinator."""
    java_hash = 0
    for ch in GROUP:
        java_hash = (31 * java_hash + ord(ch)) & 0xFFFFFFFF
    java_hash -= (java_hash & 0x80000000) << 1  # as a signed 32-bit int
    partitions = kafka.admin("operator").list_topics(OFFSETS, timeout=10).topics[OFFSETS].partitions
    return (abs(java_hash) if java_hash != -2**31 else 0) % len(partitions)


def elect_preferred(partition: int) -> bool:
    """Hands the partition to its preferred leader; True once that one leads it. Leaders
    come from metadata (broker_faults.leader_of), not the admin client's group calls, which
    abort on a dead coordinator (librdkafka PR 5397)."""
    admin = kafka.admin(credentials.ADMIN_USER)
    try:  # ELECTION_NOT_NEEDED is an answer; a preferred leader not yet in sync raises: try again
        admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(OFFSETS, partition)]).result(timeout=30)
    except KafkaException:
        return False
    meta = admin.list_topics(OFFSETS, timeout=10).topics[OFFSETS].partitions[partition]
    return meta.leader == meta.replicas[0]


@pytest.fixture(scope="module")
def exporter_url(cluster) -> str:
    found = [(host, port) for what, host, port in cluster.monitoring if what == "lag exporter"]
    if not found:
        pytest.skip("the inventory has no monitoring host")
    host, port = found[0]
    return f"http://{host}:{port}/metrics"


@pytest.mark.slow
def test_the_lag_exporter_lives_through_a_move_of_the_group_coordinators(cluster, exporter_url):
    partition = offsets_partition()
    kafka.wait_until(lambda: elect_preferred(partition), timeout=60, interval=1,
                       what=f"{OFFSETS}-{partition} on its preferred leader")
    node = broker_faults.by_id(cluster, broker_faults.leader_of(OFFSETS, partition))
    broker_faults.kill9(node)
    try:
        kafka.wait_until(lambda: broker_faults.leader_of(OFFSETS, partition) not in (node.node_id, -1),
                           timeout=120, interval=1, what=f"{GROUP}'s coordinator to move off {node.name}")
    finally:
        broker_faults.start(node)
    kafka.wait_until(lambda: broker_faults.under_replicated() == 0, timeout=180, interval=1,
                       what=f"{node.name} back in every ISR")
    # From here on the exporter must not restart. (While the node was dead it may have: the
    # admin client also aborts when its coordinator's connection drops mid-request, librdkafka
    # PR 5397, and the supervisor starts it again; that is not what this test is about.)
    started = scrape(exporter_url)["process_start_time_seconds[]"]  # it reads the group on another node
    kafka.wait_until(lambda: elect_preferred(partition), timeout=60, interval=1,
                       what=f"{GROUP}'s coordinator back on {node.name}")
    lag = f"kafka_consumergroup_lag_sum[('consumergroup', '{GROUP}'), ('topic', 'canary')]"
    after = kafka.wait_until(lambda: (s := scrape(exporter_url)).get(lag) is not None and s, timeout=60,
                               interval=1, what=f"the exporter to report {GROUP}'s lag again")
    assert after["process_start_time_seconds[]"] == started, "the lag exporter restarted: it crashed"

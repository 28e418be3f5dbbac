"""The delivery canary on the running cluster, under a partition leader's kill -9.

With the safe settings (its catalogue topic: RF 3, min ISR 2; acks=all, idempotence)
it must report 0 lost, 0 duplicated, 0 reordered across the kill and the node's
return. Pointed at a deliberately unsafe topic (RF 3 but min ISR 1 and unclean leader
election allowed, a producer with acks=1), with the leader's followers frozen so that
only the leader holds what it acknowledged, the same kill must show up as lost
records: the canary's job is to see a loss, not only to report none."""

from __future__ import annotations

import contextvars
import threading
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import NewTopic

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from kafka_patterns.monitoring import canary
from pattern_harness import broker_faults

CANARY_USER = "canary"
RATE = 100  # probes per second: enough to land some in every window of the faults
GRACE = 15  # seconds an acked probe may take to arrive before it counts as lost


class Running:
    """A canary run in a thread as its own Kafka user, stopped (drained) by stop()."""

    def __init__(self, topic: str, **options) -> None:
        self.canary = canary.Canary(canary.Options(topic=topic, group=f"canary-test-{uuid.uuid4().hex[:8]}",
                                                   rate=RATE, metrics_port=None, grace_seconds=GRACE, **options))
        self.stop_event, self.result = threading.Event(), {}
        with credentials.as_user(CANARY_USER):
            context = contextvars.copy_context()  # a thread does not inherit the user otherwise
        self.thread = threading.Thread(target=lambda: self.result.update(context.run(self.canary.run,
                                                                                      self.stop_event)))
        self.thread.start()

    def acked_past(self, at_least: int, what: str, timeout: float = 60) -> int:
        def enough() -> int | None:
            assert self.thread.is_alive(), f"the canary stopped: {self.canary.summary()}"
            n = self.canary.summary()["acked"]
            return n if n >= at_least else None
        return kafka.wait_until(enough, timeout, interval=0.2, what=what)

    def stop(self) -> dict:
        self.stop_event.set()
        self.thread.join(timeout=3 * GRACE + 30)
        assert not self.thread.is_alive(), "the canary did not drain within its grace periods"
        # Its group would outlive the test, with offsets on a topic the test deletes. A failed
        # deletion is a leftover, not a broken promise: reported, not failed.
        admin = kafka.admin(credentials.ADMIN_USER)  # kept until the answer: a dropped client never gives it
        for f in admin.delete_consumer_groups([self.canary.options.group], request_timeout=30).values():
            try:
                f.result(timeout=60)
            except KafkaException as e:
                print(f"could not delete the group {self.canary.options.group}: {e}")
        return self.result


def kill_leader_and_restart(cluster, topic: str, freeze_followers: bool, run: Running) -> str:
    """kill -9 the leader of partition 0 once probes flow (first freezing its followers,
    so that what it acks meanwhile exists on it alone), then start it again."""
    leader = broker_faults.by_id(cluster, broker_faults.leader_of(topic, 0))
    followers = [n for n in cluster.nodes if n is not leader and n.broker_port]
    before = run.acked_past(RATE, "the canary's first acks")
    if freeze_followers:
        for node in followers:
            broker_faults.pause(node)
    try:
        run.acked_past(before + RATE, f"acks from {leader.name} while its followers are frozen")
        broker_faults.kill9(leader)
    finally:
        if freeze_followers:
            for node in followers:
                broker_faults.resume(node)
    run.acked_past(run.canary.summary()["acked"] + RATE, "acks from the new leader", timeout=120)
    broker_faults.start(leader)
    return leader.name


@pytest.mark.slow
def test_the_canary_counts_nothing_lost_across_a_leader_kill_with_the_safe_settings(cluster):
    run = Running("canary")
    try:
        killed = kill_leader_and_restart(cluster, "canary", freeze_followers=False, run=run)
        run.acked_past(run.canary.summary()["acked"] + RATE, f"acks after {killed} came back")
    finally:
        counts = run.stop()
    print(f"canary, safe settings, {killed} killed: {counts}")
    assert counts["acked"] > 3 * RATE
    assert (counts["lost"], counts["duplicated"], counts["reordered"]) == (0, 0, 0), counts
    assert counts["consumed"] == counts["acked"], counts


@pytest.fixture
def unsafe_topic():
    """canary.unsafe-<id>: one partition on three replicas, but min ISR 1 and unclean
    leader election allowed (created and deleted by the admin; the canary user may
    write and read canary.* only)."""
    name = f"canary.unsafe-{uuid.uuid4().hex[:8]}"
    admin = kafka.admin(credentials.ADMIN_USER)
    config = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
    (future,) = admin.create_topics([NewTopic(name, 1, 3, config=config)]).values()
    future.result(timeout=60)
    def has_leader() -> bool:
        # Right after the creation the metadata can name the topic before its partition.
        topic = admin.list_topics(name, timeout=10).topics.get(name)
        partition = topic.partitions.get(0) if topic is not None else None
        return partition is not None and partition.leader >= 0

    kafka.wait_until(has_leader, timeout=60, what=f"a leader for {name}")
    yield name
    for f in admin.delete_topics([name], operation_timeout=60).values():
        f.result(timeout=90)


@pytest.mark.slow
def test_the_canary_reports_the_loss_an_unsafe_topic_and_producer_suffer(cluster, unsafe_topic):
    run = Running(unsafe_topic, producer_config={"acks": "1", "enable.idempotence": "false"})
    try:
        killed = kill_leader_and_restart(cluster, unsafe_topic, freeze_followers=True, run=run)
    finally:
        counts = run.stop()
    print(f"canary, acks=1 on {unsafe_topic}, {killed} killed with its followers frozen: {counts}")
    assert counts["lost"] > 0, f"the records only {killed} held were acked and never read, yet: {counts}"
    assert counts["consumed"] + counts["lost"] >= counts["acked"], counts


"""runner.read_records, the read-back every scenario's verdict rests on, against a topic
a transactional job writes: such a topic can end with a transaction marker, an offset
for which no message comes (weather.deadletter, which changelog-state writes in its
transactions, did in CI and the read-back waited for it until its timeout)."""

import pytest
from confluent_kafka import Producer

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, credentials
from pattern_harness import job_runs

JOB = "exactly-once-copier"  # a transactional catalogue job: its user may use its transactional id


@pytest.mark.slow
@one_run_at_a_time("exactly-once-kafka")
def test_a_topic_that_ends_with_a_commit_marker_is_read_back_to_its_end(cluster):
    (topic,) = catalogue.job(JOB).output_topics
    run = job_runs.new_run()
    start = job_runs.end_offsets([topic])
    with credentials.as_user(JOB):
        producer = Producer({**kafka.base_config(), "transactional.id": JOB})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, key=run, value=f"read-back probe {run}")
        producer.commit_transaction(30)
    # commit_transaction returns once the coordinator has logged the commit; it writes the
    # marker to the partition after that, and only then does the (read_committed) end move.
    end = kafka.wait_until(lambda: _moved(start, job_runs.end_offsets([topic]), topic), timeout=30,
                             what=f"the probe's commit marker on {topic}")
    (partition,) = [p for p, o in end[topic].items() if o > start[topic][p]]
    # The record and its commit marker: the end is one past the marker.
    assert end[topic][partition] == start[topic][partition] + 2

    records = job_runs.read_records(start, end, timeout=20)

    assert [m.value().decode() for m in records] == [f"read-back probe {run}"]


def _moved(start: dict, end: dict, topic: str) -> dict | None:
    """`end` once some partition of the topic has moved past `start`, else None."""
    return end if any(o > start[topic][p] for p, o in end[topic].items()) else None

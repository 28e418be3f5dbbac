"""make dlq / make replay-dlq against the running cluster: letters written to the
dead-letter topic are shown grouped by reason, and the letters of one reason go back
to their source topic (as the catalogue user `dlq`)."""

import uuid

from confluent_kafka import TopicPartition

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, credentials
from platform_cli import dlq

# The replayed letters land in weather.readings: not while a pipeline run (test_pipeline,
# test_bad_input) reads it, counting what it dead-letters (the pipeline's xdist group).
pytestmark = one_run_at_a_time("pipeline")


def write_letters(job: str, reasons: list[str]) -> None:
    producer = kafka.producer()  # the harness: it may write weather.* topics
    for i, reason in enumerate(reasons):
        producer.produce(dlq.TOPIC, f"bad-{job}-{i}".encode(), b"sensor-01", headers=[
            ("trace-id", f"{job}-{i}".encode()),  # the record's own header, carried by its letter
            ("reason", reason.encode()), ("source.topic", b"weather.readings"), ("source.partition", b"0"),
            ("source.offset", str(i).encode()), ("job", job.encode())])
    assert producer.flush(30) == 0


def replayed(job: str, since: dict[int, int]) -> list[tuple[bytes, list]]:
    """The replayed records of this job's letters: (value, header names)."""
    topic = "weather.readings"
    consumer = kafka.consumer(f"harness-dlq-probe-{uuid.uuid4().hex[:8]}")
    consumer.assign([TopicPartition(topic, p, o) for p, o in since.items()])
    found: list[tuple[bytes, list]] = []
    try:
        def seen_both() -> bool:
            for m in consumer.consume(500, timeout=0.5):
                headers = dict(m.headers() or []) if m.error() is None else {}
                if "replayed.from" in headers and m.value().startswith(f"bad-{job}-".encode()):
                    found.append((m.value(), m.headers()))
            return len(found) >= 2
        kafka.wait_until(seen_both, timeout=60, interval=0, what="the replayed letters in weather.readings")
    finally:
        consumer.close()
    return found


def test_letters_are_grouped_by_reason_and_one_reason_is_replayed(cluster):
    job = f"dlq-test-{uuid.uuid4().hex[:8]}"
    write_letters(job, ["not JSON", "ts out of range", "not JSON"])
    since = kafka.end_offsets("weather.readings", catalogue.topics()["weather.readings"].partitions)
    with credentials.as_user(dlq.USER):
        ours = [x for x in dlq.read_all() if x.headers.get("job") == job]
        groups = {g.reason: g.count for g in dlq.group(ours)}
        assert groups == {"not JSON": 2, "ts out of range": 1}
        assert dlq.replay(ours, "not JSON") == 2
    back = sorted(replayed(job, since))
    assert [value for value, _ in back] == [f"bad-{job}-0".encode(), f"bad-{job}-2".encode()]
    # Each goes back with its own header and the letter it came from, none of the letter's headers.
    assert [[k for k, _ in headers] for _, headers in back] == [["trace-id", "replayed.from"]] * 2
    assert [dict(headers)["trace-id"] for _, headers in back] == [f"{job}-0".encode(), f"{job}-2".encode()]

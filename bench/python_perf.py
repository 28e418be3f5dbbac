"""The project's Python client path (confluent-kafka through kafka_patterns.clients)
measured the way the Java perf tools measure: one producer sending a fixed payload
of the record size as fast as it can, one consumer reading the topic from the start."""

from __future__ import annotations

import time

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from bench import stats
from kafka_patterns import clients


def produce(topic: str, count: int, size: int, props: dict[str, str]) -> dict[str, float]:
    """count records of `size` bytes (same payload each time: generating random payloads
    would measure the generator) through clients.producer() with the mode's settings.
    Latency is send -> acknowledgement per record (Message.latency())."""
    producer = clients.producer(**props)
    payload = b"x" * size
    latencies: list[float] = []
    errors: list[str] = []

    def delivered(err, msg) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            latencies.append(msg.latency())

    t0 = time.monotonic()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload, on_delivery=delivered)
                break
            except BufferError:  # local queue full: serve delivery reports, then retry
                producer.poll(0.01)
        producer.poll(0)
    remaining = producer.flush(120)
    seconds = time.monotonic() - t0
    if remaining or errors:
        raise RuntimeError(f"Python producer: {remaining} unacknowledged, {len(errors)} errors "
                           f"({errors[:1]}) on {topic}")
    ms = [x * 1000 for x in latencies]
    return {"records": len(latencies), "records_per_s": stats.rate(count, seconds),
            "mb_per_s": stats.mb_per_s(count, size, seconds), "latency_avg_ms": sum(ms) / len(ms),
            "latency_p50_ms": stats.percentile(ms, 50), "latency_p99_ms": stats.percentile(ms, 99),
            "wall_s": seconds}


def consume(topic: str, partitions: int, count: int, group: str) -> dict[str, float]:
    """Read `count` records from the start of every partition (assigned, no group join,
    like the fetch rate of ConsumerPerformance)."""
    consumer = clients.consumer(group, **{"enable.partition.eof": False, "check.crcs": False})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        got, size = 0, 0
        t0 = time.monotonic()
        deadline = t0 + 60 + count / 5_000
        while got < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"Python consumer read {got} of {count} records of {topic}")
            for msg in consumer.consume(num_messages=10_000, timeout=1.0):
                if msg.error() is None:
                    got += 1
                    size += len(msg.value() or b"")
        seconds = time.monotonic() - t0
    finally:
        consumer.close()
    return {"records": got, "records_per_s": stats.rate(got, seconds),
            "mb_per_s": (size / stats.MB) / seconds, "wall_s": seconds}

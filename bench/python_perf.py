"""The project's Python client path (confluent-kafka through kafka_patterns.clients.kafka)
measured the way the Java perf tools measure: one producer sending a fixed payload
of the record size as fast as it can, one consumer reading the topic from the start."""

from __future__ import annotations

import time

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from bench import stats
from kafka_patterns.clients import kafka

# A throughput consumer: librdkafka prefetches up to this many messages per partition
# (default 100,000) in fetches of up to 50 MB (10 MB per partition), so a consume() call
# finds a full batch waiting instead of a fetch in flight.
THROUGHPUT_CONSUMER = {"fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760,
                       "queued.max.messages.kbytes": 1_048_576, "queued.min.messages": 1_000_000}


def produce(topic: str, count: int, size: int, props: dict[str, str], warmup: int = 0) -> dict[str, float]:
    """count records of `size` bytes (same payload each time: generating random payloads
    would measure the generator) through clients.producer() with the mode's settings.
    Latency is send -> acknowledgement per record (Message.latency()). The first `warmup`
    records are left out of the figures (connection, metadata, producer id), like
    ProducerPerformance's --warmup-records: the rate is timed from the send of the first
    record after them to the acknowledgement of the last."""
    producer = kafka.producer(**props)
    payload = b"x" * size
    latencies: list[float] = []
    errors: list[str] = []

    def delivered(err, msg) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            latencies.append(msg.latency())

    t0 = steady_from = time.monotonic()
    for i in range(count):
        if i == warmup:
            steady_from = time.monotonic()
        while True:
            try:
                producer.produce(topic, payload, on_delivery=delivered)
                break
            except BufferError:  # local queue full: serve delivery reports, then retry
                producer.poll(0.01)
        producer.poll(0)
    remaining = producer.flush(120)
    end = time.monotonic()
    if remaining or errors:
        raise RuntimeError(f"Python producer: {remaining} unacknowledged, {len(errors)} errors "
                           f"({errors[:1]}) on {topic}")
    start = steady_from
    measured = count - warmup
    ms = [x * 1000 for x in latencies[warmup:]]
    return {"records": len(latencies), "records_per_s": stats.rate(measured, end - start),
            "mb_per_s": stats.mb_per_s(measured, size, end - start), "latency_avg_ms": sum(ms) / len(ms),
            "latency_p50_ms": stats.percentile(ms, 50), "latency_p99_ms": stats.percentile(ms, 99),
            "wall_s": end - t0, "warmup_records": warmup}


def consume(topic: str, partitions: int, count: int, group: str, size: int, warmup: int = 0) -> dict[str, float]:
    """Read `count` records of `size` bytes from the start of every partition (assigned,
    no group join, like the fetch rate of ConsumerPerformance), in batches with no
    per-record Python work but the error check (the bench only counts); the first
    `warmup` records are left out of the figures (connection, first fetches)."""
    consumer = kafka.consumer(group, **{"enable.partition.eof": False, "check.crcs": False,
                                          **THROUGHPUT_CONSUMER})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        got, start, counted_from = 0, None, 0
        t0 = time.monotonic()
        deadline = t0 + 60 + count / 5_000
        while got < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"Python consumer read {got} of {count} records of {topic}")
            batch = consumer.consume(num_messages=10_000, timeout=1.0)
            got += len(batch) - sum(1 for m in batch if m.error() is not None)
            if start is None and got >= warmup:
                start, counted_from = time.monotonic(), got
        end = time.monotonic()
    finally:
        consumer.close()
    measured = got - counted_from if warmup else got
    seconds = end - (start if warmup else t0)
    return {"records": got, "records_per_s": stats.rate(measured, seconds),
            "mb_per_s": stats.mb_per_s(measured, size, seconds), "wall_s": end - t0, "warmup_records": warmup}

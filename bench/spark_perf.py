"""The Spark Kafka source: a batch read of a whole topic (kafka_patterns.runtime.spark.read_batch)
and count(), timed around the action only (the session is started once, and warmed
on the first cell, outside the timing)."""

from __future__ import annotations

import time

from bench import stats

_warm: set[int] = set()


def session():
    from kafka_patterns.runtime import spark

    return spark.session("bench")


def count(topic: str, size: int, expected: int) -> dict[str, float]:
    from kafka_patterns.runtime import spark

    s = session()
    if id(s) not in _warm:  # the first action loads the connector classes and JITs the reader
        spark.read_batch(s, [topic]).limit(10).count()
        _warm.add(id(s))
    t0 = time.monotonic()
    n = spark.read_batch(s, [topic]).count()
    seconds = time.monotonic() - t0
    if n < expected:
        raise RuntimeError(f"Spark read {n} of {expected} records of {topic}")
    return {"records": n, "records_per_s": stats.rate(n, seconds), "mb_per_s": stats.mb_per_s(n, size, seconds),
            "wall_s": seconds}

"""Unit-tier fixtures: a local Spark session and in-memory Kafka records, so job
transformations are tested without Kafka."""

from __future__ import annotations

import datetime as dt
import json

import pytest


@pytest.fixture(scope="session")
def spark():
    from kafka_patterns.runtime import spark as kp_spark

    return kp_spark.session("unit-tests")


@pytest.fixture
def kafka_records(spark):
    """kafka_records([value, ...], topic=..., key=...) -> a DataFrame shaped like the
    Kafka source's rows (values that are dicts are JSON-encoded); offsets count up."""
    def make(values, topic="weather.readings", partition=0, keys=None):
        rows = []
        for i, v in enumerate(values):
            raw = json.dumps(v).encode() if isinstance(v, dict) else (v.encode() if isinstance(v, str) else v)
            key = (keys[i] if keys else (v.get("sensor") if isinstance(v, dict) else None))
            rows.append((key.encode() if key else None, raw, topic, partition, i,
                         dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i), 0))
        return spark.createDataFrame(
            rows, "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
                  "timestampType int")
    return make


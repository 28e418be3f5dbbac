"""The lag exporter against the local cluster: a fresh group committed at the topic's
start shows exactly the records written since as lag, and none once committed at the end.
The harness writes and commits; the exporter reads as `operator` (Describe only).

The topic is the test's own: the tier runs in parallel, and a pattern test writing to a
shared topic between two scrapes would change the lag this test asserts exactly."""

import re
import uuid

import pytest
from prometheus_client import CollectorRegistry

from kafka_patterns.clients import kafka
from kafka_patterns.monitoring.lag_exporter import LagCollector, OffsetSource
from pattern_harness import chaos, job_runs

RECORDS = 500


def exporter(group: str) -> CollectorRegistry:
    """An in-process exporter as `operator`, for this group only (the cluster holds others)."""
    registry = CollectorRegistry()
    registry.register(LagCollector(OffsetSource(user="operator"), groups_regex=f"^{re.escape(group)}$"))
    return registry


@pytest.fixture
def topic(cluster):
    """A topic of this test alone, under `chaos.`: the prefix where the harness may create
    and delete the topics of one run (the broker fault tier's too)."""
    name = f"{chaos.PREFIX}lag-exporter-test.{uuid.uuid4().hex[:8]}"
    chaos.create_topic(name)
    yield name
    chaos.delete_topic(name)


def produce(topic: str, count: int) -> None:
    producer = kafka.producer()
    errors = []
    for i in range(count):
        producer.produce(topic, key=str(i % 20).encode(), value=f"record {i}".encode(),
                         on_delivery=lambda err, _msg: err and errors.append(err))
    assert producer.flush(60) == 0 and not errors, errors


@pytest.mark.slow
def test_exported_lag_sum_is_the_seeded_groups_exact_lag(topic):
    group = f"lag-exporter-test-{uuid.uuid4().hex[:8]}"  # the harness may use any group ("*" Read)
    start = kafka.end_offsets(topic, chaos.PARTITIONS)
    job_runs.seed_group(group, topic, start)
    produce(topic, RECORDS)
    end = kafka.end_offsets(topic, chaos.PARTITIONS)
    assert sum(end[p] - start[p] for p in end) == RECORDS

    registry = exporter(group)
    labels = {"consumergroup": group, "topic": topic}
    assert registry.get_sample_value("kafka_consumergroup_lag_sum", labels) == RECORDS
    assert registry.get_sample_value("kafka_consumergroup_members", {"consumergroup": group}) == 0
    for p, offset in start.items():
        assert registry.get_sample_value("kafka_consumergroup_current_offset", {**labels, "partition": str(p)}) \
            == offset

    job_runs.seed_group(group, topic, end)
    assert registry.get_sample_value("kafka_consumergroup_lag_sum", labels) == 0
    assert registry.get_sample_value("kafka_patterns_lag_exporter_scrape_errors_total") == 0

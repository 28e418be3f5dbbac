"""The lag exporter against the local cluster: a fresh group committed at the topic's
start shows exactly the records written since as lag, and none once committed at the end.
The harness writes and commits; the exporter reads as `operator` (Describe only)."""

import re
import uuid

import pytest
from prometheus_client import CollectorRegistry

from kafka_patterns import generator, runner
from kafka_patterns.lag_exporter import LagCollector, OffsetSource

TOPIC = "weather.readings"
READINGS = 500


def exporter(group: str) -> CollectorRegistry:
    """An in-process exporter as `operator`, for this group only (the cluster holds others)."""
    registry = CollectorRegistry()
    registry.register(LagCollector(OffsetSource(user="operator"), groups_regex=f"^{re.escape(group)}$"))
    return registry


@pytest.mark.slow
def test_exported_lag_sum_is_the_seeded_groups_exact_lag(cluster):
    group = f"lag-exporter-test-{uuid.uuid4().hex[:8]}"  # the harness may use any group ("*" Read)
    start = runner.end_offsets([TOPIC])[TOPIC]
    runner.seed_group(group, TOPIC, start)
    produced = generator.produce(TOPIC, READINGS, run=group)
    assert len(produced.acked) == READINGS, produced.errors
    end = runner.end_offsets([TOPIC])[TOPIC]
    # From the offsets, not READINGS: the bad-input suite, when it runs, adds its cases.
    expected = sum(end[p] - start[p] for p in end)
    assert expected >= READINGS

    registry = exporter(group)
    labels = {"consumergroup": group, "topic": TOPIC}
    assert registry.get_sample_value("kafka_consumergroup_lag_sum", labels) == expected
    assert registry.get_sample_value("kafka_consumergroup_members", {"consumergroup": group}) == 0
    for p, offset in start.items():
        assert registry.get_sample_value("kafka_consumergroup_current_offset", {**labels, "partition": str(p)}) \
            == offset

    runner.seed_group(group, TOPIC, end)
    assert registry.get_sample_value("kafka_consumergroup_lag_sum", labels) == 0
    assert registry.get_sample_value("kafka_patterns_lag_exporter_scrape_errors_total") == 0

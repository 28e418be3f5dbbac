"""push-pull work queue: real consumer-group members (separate processes), more of
them than partitions, one SIGKILLed mid-stream."""

import pytest

from kafka_patterns.scenarios import work_queue


@pytest.mark.slow
def test_work_queue_shares_partitions_exclusively_and_loses_nothing_when_a_worker_dies(cluster):
    outcome = work_queue.run(records=3_000, workers=8, rate=300, kills=1)
    d = outcome.delivery
    assert d.acked == 3_000
    assert d.lost == 0, outcome.notes
    assert d.received == d.acked + d.duplicated  # duplicates allowed, counted
    assert all(outcome.checks.values()), outcome.checks

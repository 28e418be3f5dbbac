"""Work queue under faults: two partition-owning workers SIGKILLed one after the other
while items stream in; their partitions move to the survivors (the idle spares first
in line), nothing is lost, the re-processed uncommitted batches are counted."""

import pytest

from kafka_patterns.scenarios import work_queue


@pytest.mark.slow
def test_work_queue_survives_two_worker_kills(cluster):
    outcome = work_queue.run(records=6_000, workers=8, rate=400, kills=2)
    d = outcome.delivery
    assert d.acked == 6_000
    assert d.lost == 0, f"{d.lost} work items never processed: {outcome.notes}"
    assert d.reordered == 0
    assert outcome.checks["every partition owned by exactly one worker at a time"], outcome.notes
    assert outcome.checks["the killed workers' partitions moved to survivors"], outcome.notes
    assert outcome.checks["a previously idle worker took over partitions"], outcome.notes
    assert all(outcome.checks.values()), outcome.checks

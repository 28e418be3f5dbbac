"""batch under a crash: a run that dies after writing its aggregates and ranges but
before committing leaves nothing behind; the next run reads the same range, so no
reading is lost or counted twice."""

import pytest

from kafka_patterns.scenarios import batch


@pytest.mark.slow
def test_a_run_crashed_before_its_commit_is_redone_without_loss_or_double_counting(cluster):
    outcome = batch.run(records=1_500, more=1_000, crash=True)
    d = outcome.delivery
    assert outcome.checks["the run crashed before its commit (exit 137)"], outcome.notes
    assert outcome.checks["the crashed run left no range and no aggregates behind"]
    assert (d.acked, d.lost, d.duplicated) == (2_500, 0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.failures()

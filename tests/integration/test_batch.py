"""batch: two runs read contiguous, non-overlapping offset ranges whose aggregates
equal the input; a run with nothing new writes nothing."""

import pytest

from kafka_patterns.scenarios import batch


@pytest.mark.slow
def test_second_run_reads_only_the_new_range_and_an_empty_run_is_a_no_op(cluster):
    outcome = batch.run(records=1_500, more=1_000)
    d = outcome.delivery
    assert d.acked == 2_500
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.failures()
    assert outcome.verdict == "PASS"

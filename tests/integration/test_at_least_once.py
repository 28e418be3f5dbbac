"""at-least-once: a Spark job crashed after a sink write and before its checkpoint
commit loses nothing; the replayed batch shows as counted duplicates."""

import pytest

from kafka_patterns.scenarios import at_least_once


@pytest.mark.slow
def test_one_crash_loses_nothing_and_the_replayed_batch_is_counted(cluster):
    outcome = at_least_once.run(records=3_000, kills=1)
    d = outcome.delivery
    assert d.acked == 3_000
    assert d.lost == 0, outcome.notes
    assert d.duplicated > 0, "the crash after batch 2's write should have replayed it"
    assert d.received == d.acked + d.duplicated
    assert outcome.verdict == "PASS"

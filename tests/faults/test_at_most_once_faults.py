"""at-most-once under outside SIGKILLs: whatever a killed consumer had committed but
not yet written is lost (counted); nothing is ever written twice."""

import pytest

from kafka_patterns.scenarios import at_most_once


@pytest.mark.slow
def test_sigkills_while_processing_lose_records_but_never_duplicate(cluster):
    outcome = at_most_once.run(records=4_000, crash_after_commit=2, sigkills=3)
    d = outcome.delivery
    assert outcome.checks["SIGKILLed 3 times while processing"], outcome.notes
    assert d.duplicated == 0, "commit-before-process must never deliver a record twice"
    assert d.lost >= 250, "at least the batch committed before the crash is lost"
    assert d.received + d.lost == d.acked

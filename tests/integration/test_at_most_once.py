"""fire-and-forget / at-most-once: a crash between commit and processing loses that
batch (counted), and nothing is ever delivered twice."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import at_most_once

pytestmark = one_run_at_a_time("at-most-once")


@pytest.mark.slow
def test_crash_after_commit_loses_the_batch_but_never_duplicates(cluster):
    outcome = at_most_once.run(records=3_000, crash_after_commit=2)
    d = outcome.delivery
    assert outcome.checks["the consumer crashed once between commit and processing"]
    assert d.duplicated == 0
    assert 0 < d.lost <= 250, "exactly the batch committed before the crash is lost"
    assert d.received + d.lost == d.acked

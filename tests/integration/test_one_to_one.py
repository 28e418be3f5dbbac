"""one-to-one: every acknowledged reading lands in PostgreSQL exactly once, in
per-sensor order."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import one_to_one

pytestmark = one_run_at_a_time("one-to-one")


@pytest.mark.slow
def test_every_reading_reaches_postgres_once_in_per_key_order(cluster):
    outcome = one_to_one.run(records=3_000)
    d = outcome.delivery
    assert d.acked == 3_000
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()
    assert outcome.verdict == "PASS"

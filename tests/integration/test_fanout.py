"""pub-sub fan-out: every subscriber (logger, averager, min/max) sees every reading."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import fanout

pytestmark = one_run_at_a_time("fan-out")


@pytest.mark.slow
def test_each_subscriber_sees_every_reading(cluster):
    outcome = fanout.run(records=1_500)
    d = outcome.delivery
    assert d.acked == 1_500
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks
    assert outcome.records_out == 1_500
    assert outcome.verdict == "PASS"

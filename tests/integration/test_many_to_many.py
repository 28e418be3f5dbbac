"""many-to-many: every consumer group sees every record of every producer."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import many_to_many

pytestmark = one_run_at_a_time("many-to-many")


@pytest.mark.slow
def test_every_group_sees_every_record_of_every_producer(cluster):
    outcome = many_to_many.run(records=800)
    d = outcome.delivery
    groups = 1 + len(many_to_many.CLIENT_GROUPS)
    assert outcome.records_in == 1_600
    assert d.acked == 1_600 * groups
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks
    assert outcome.records_out == 1_600 * groups

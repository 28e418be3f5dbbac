"""changelog-state: state kept in a compacted changelog survives kills. The job is
SIGKILLed three times mid-stream and rebuilds its state from the changelog each time;
the final state equals Python's and the output holds every reading exactly once."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import changelog_state

pytestmark = one_run_at_a_time("changelog-state")


@pytest.mark.slow
def test_three_kills_leave_the_changelog_state_equal_to_pythons_and_every_output_exactly_once(cluster):
    outcome = changelog_state.run(records=4_000)
    d = outcome.delivery
    kills = [f for f in outcome.faults if f.startswith("sigkill")]
    assert len(kills) == 3, outcome.faults
    assert outcome.checks["the changelog's state equals Python's (0 state differences)"], outcome.notes
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()
    assert d.received == d.acked == 4_000
    assert outcome.failures() == [], (outcome.failures(), outcome.notes)

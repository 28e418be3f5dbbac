"""self-managed offsets under repeated SIGKILLs: each restart resumes from the offsets
committed with the state, so no record is applied twice or skipped."""

import pytest

from kafka_patterns.scenarios import self_managed_offsets


@pytest.mark.slow
def test_three_sigkills_leave_state_equal_to_the_input(cluster):
    outcome = self_managed_offsets.run(records=4_000, kills=3)
    d = outcome.delivery
    assert outcome.checks["killed 3 times mid-stream"], outcome.notes
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert outcome.checks["stored offsets equal the topic end"]
    assert outcome.checks["per-sensor count, temperature sum and last seq equal Python's"]

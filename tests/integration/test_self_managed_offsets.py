"""self-managed offsets: a consumer killed mid-stream resumes from the offsets stored
with its state; the state equals a Python computation over the input."""

import pytest

from kafka_patterns.scenarios import self_managed_offsets


@pytest.mark.slow
def test_killed_consumer_resumes_from_the_offsets_stored_with_its_state(cluster):
    outcome = self_managed_offsets.run(records=3_000, kills=1)
    d = outcome.delivery
    assert d.acked >= 3_000, "the range holds at least this run's readings"
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert outcome.checks == {"killed 1 times mid-stream": True, "the bounded run stopped at the end offsets": True,
                              "stored offsets equal the topic end": True,
                              "per-sensor count, temperature sum and last seq equal Python's": True}, outcome.notes

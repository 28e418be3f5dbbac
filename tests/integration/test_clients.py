"""Client patterns: request-reply across a responder restart, and replay. (Self-managed
offsets: test_self_managed_offsets.py here, three kills in tests/faults.)"""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import request_reply


@pytest.mark.slow
@one_run_at_a_time("request-reply")
def test_every_request_gets_exactly_one_reply_across_a_responder_restart(cluster):
    outcome = request_reply.run(requests=1_500)
    d = outcome.delivery
    assert (d.lost, d.duplicated, d.unacked) == (0, 0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks


@pytest.mark.slow
@one_run_at_a_time("replay")
def test_replay_from_offset_and_from_timestamp_reproduce_the_aggregate(cluster):
    from pattern_harness.scenarios import replay

    outcome = replay.run(records=3_000)
    assert outcome.checks == {"replay from offsets reproduces the aggregate": True,
                              "replay from a timestamp reproduces the aggregate": True}
    assert (outcome.delivery.lost, outcome.delivery.duplicated) == (0, 0)

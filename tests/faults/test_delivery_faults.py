"""Delivery semantics under faults: Spark jobs crashed right after a sink write (before
the checkpoint commit) and SIGKILLed mid-stream, then restarted from their checkpoints."""

import pytest

from kafka_patterns.scenarios import at_least_once, exactly_once


@pytest.mark.slow
def test_exactly_once_sink_survives_three_kills_without_loss_or_duplicates(cluster):
    outcome = exactly_once.run(records=3_000, kills=3)
    d = outcome.delivery
    assert outcome.checks == {"killed 3 times mid-stream": True,
                              "no unique key on the sink that would hide duplicates": True}, outcome.notes
    assert d.acked == 3_000
    assert d.lost == 0, f"{d.lost} records lost across the kills"
    assert d.duplicated == 0, f"{d.duplicated} duplicates: a replayed batch was written twice"


@pytest.mark.slow
def test_at_least_once_loses_nothing_and_counts_the_replayed_batch(cluster):
    outcome = at_least_once.run(records=3_000, kills=2)
    d = outcome.delivery
    assert d.lost == 0
    # The crash lands after batch 2's write and before its checkpoint commit: the
    # restarted job writes that batch again. At-least-once, not exactly-once.
    assert d.duplicated > 0, "the crash after a sink write should have replayed a batch"
    assert d.received == d.acked + d.duplicated


@pytest.mark.slow
def test_transactional_copier_killed_three_times_copies_each_record_once(cluster):
    from kafka_patterns.scenarios import transactional

    outcome = transactional.run(records=4_000, kills=3)
    d = outcome.delivery
    assert outcome.checks == {"killed 3 times mid-stream": True}, outcome.notes
    assert (d.acked, d.lost, d.duplicated, d.reordered) == (4_000, 0, 0, 0), outcome.failures()

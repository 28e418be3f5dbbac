"""Delivery semantics under faults: the exactly-once Spark job and the transactional
copier SIGKILLed three times mid-stream, restarted from their checkpoints. (These are
their only kill tests; at-least-once's crash after a sink write is in tests/integration.)"""

import pytest

from kafka_patterns.scenarios import exactly_once


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
def test_transactional_copier_killed_three_times_copies_each_record_once(cluster):
    from kafka_patterns.scenarios import transactional

    outcome = transactional.run(records=4_000, kills=3)
    d = outcome.delivery
    assert outcome.checks == {"killed 3 times mid-stream": True}, outcome.notes
    assert (d.acked, d.lost, d.duplicated, d.reordered) == (4_000, 0, 0, 0), outcome.failures()

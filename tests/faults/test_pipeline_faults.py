"""pipes and filters under faults: the clean stage crashes right after a Kafka write
(before its checkpoint commit) and is SIGKILLed, restarting from its checkpoint each
time; the at-least-once stage duplicates, the aggregates still account every valid
reading exactly once."""

import pytest

from kafka_patterns.scenarios import pipeline


@pytest.mark.slow
def test_killed_clean_stage_loses_nothing_and_duplicates_are_absorbed(cluster):
    outcome = pipeline.run(records=1_200, malformed=20, kills=2)
    d = outcome.delivery
    assert outcome.records_in == 1_200
    assert (d.lost, d.duplicated) == (0, 0), (outcome.failures(), outcome.notes)
    assert all(outcome.checks.values()), (outcome.checks, outcome.notes)
    assert any("kill 2" in n for n in outcome.notes), outcome.notes

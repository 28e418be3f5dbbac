"""time semantics: event-time windows with a watermark drop (and count) late readings;
ingestion time is the broker's; processing time counts everything."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import time_semantics

pytestmark = one_run_at_a_time("time-semantics")


@pytest.mark.slow
def test_event_ingestion_and_processing_time_on_the_same_input(cluster):
    outcome = time_semantics.run(records=450, late=0.1)
    d = outcome.delivery
    assert outcome.records_in == 450
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert all(outcome.checks.values()), (outcome.checks, outcome.notes)
    assert outcome.verdict == "PASS"

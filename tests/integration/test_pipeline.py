"""pipes and filters: raw -> clean -> enrich -> aggregate -> sink, nothing lost."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import pipeline

# One pipeline run at a time: runs side by side share the station profiles (the Makefile
# runs the tier's tests on several workers; an xdist group stays on one).
pytestmark = one_run_at_a_time("pipeline")


@pytest.mark.slow
def test_every_valid_reading_is_aggregated_and_every_malformed_one_dead_lettered(cluster):
    outcome = pipeline.run(records=1_000, malformed=20)
    d = outcome.delivery
    assert outcome.records_in == 1_000
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert outcome.records_out == 1_000
    assert all(outcome.checks.values()), (outcome.checks, outcome.notes)
    assert outcome.verdict == "PASS"

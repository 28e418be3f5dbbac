"""CDC under faults: the cdc-transform Spark job SIGKILLed mid-stream and restarted
from its checkpoint: every change still reaches the replica (nothing lost, deletes
applied); the events it transforms twice are counted, and the JDBC sink's upserts
absorb them."""

import pytest

from kafka_patterns.scenarios import cdc


@pytest.mark.slow
def test_cdc_transform_killed_mid_stream_loses_no_change(cluster):
    outcome = cdc.run(rows=200, updates=60, deletes=40, kills=1)
    d = outcome.delivery
    assert outcome.checks["killed 1 times mid-stream"], outcome.notes
    assert d.lost == 0, f"{d.lost} rows missing from the replica after the kill: {outcome.notes}"
    assert all(outcome.checks.values()), (outcome.checks, outcome.notes)
    print(f"cdc kill: {outcome.notes}")

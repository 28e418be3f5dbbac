"""CDC through Kafka Connect: Debezium source -> Spark transform -> Debezium JDBC sink."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import cdc

pytestmark = one_run_at_a_time("cdc")


@pytest.mark.slow
def test_replica_matches_the_transformed_source_after_inserts_updates_and_deletes(cluster):
    outcome = cdc.run(rows=120, updates=40, deletes=25)
    d = outcome.delivery
    assert outcome.records_in == 185
    assert d.acked == 95 and d.received == 95, outcome.notes
    assert (d.lost, d.duplicated, d.unacked) == (0, 0, 0), outcome.notes
    assert all(outcome.checks.values()), (outcome.checks, outcome.notes)

"""batch: two runs read contiguous, non-overlapping offset ranges whose aggregates
equal the input; a run with nothing new writes nothing."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import batch

pytestmark = one_run_at_a_time("batch")


@pytest.mark.slow
def test_second_run_reads_only_the_new_range_and_an_empty_run_is_a_no_op(cluster):
    outcome = batch.run(records=1_500, more=1_000)
    d = outcome.delivery
    assert d.acked == 2_500
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.failures()
    assert outcome.verdict == "PASS"


def test_a_ledger_from_another_kafka_cluster_restarts_from_the_beginning_on_this_one(cluster):
    """A Kafka cluster made again while PostgreSQL kept the ledger: the old cluster's end
    offsets must neither stop the runs (beyond this cluster's ends) nor skip records."""
    import uuid

    from kafka_patterns.clients import kafka, postgres
    from kafka_patterns.config import catalogue
    from kafka_patterns.jobs import batch_aggregate

    this_cluster = kafka.cluster_id("weather.readings")
    assert this_cluster, "the cluster has an id"
    key = f"test-ledger-{uuid.uuid4().hex[:8]}"
    postgres.ensure(*batch_aggregate.DDL, table=catalogue.job("batch-aggregate").table)
    insert = """INSERT INTO batch_ranges (ledger_key, batch_run, topic, kafka_partition, start_offset,
                end_offset, kafka_cluster) VALUES (%s, %s, 'weather.readings', 0, %s, %s, %s)"""
    with postgres.connect() as conn:
        conn.execute(insert, (key, 1, 0, 10**9, "a-cluster-made-before"))
        assert batch_aggregate.stored_ends(conn, key, this_cluster) == (1, {})
        conn.execute(insert, (key, 2, 0, 5, this_cluster))
        conn.execute(insert, (key, 3, 0, 10**9, "a-cluster-made-before"))
        assert batch_aggregate.stored_ends(conn, key, this_cluster) == (3, {"weather.readings": {0: 5}})
        conn.rollback()

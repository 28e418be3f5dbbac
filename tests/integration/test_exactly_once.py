"""exactly-once: the Spark job with a transactional PostgreSQL sink and the Kafka
transactional copier, each killed once mid-stream, deliver every record once."""

import pytest

from kafka_patterns.scenarios import exactly_once, transactional


@pytest.mark.slow
def test_spark_job_killed_once_writes_every_record_once(cluster):
    outcome = exactly_once.run(records=3_000, kills=1)
    d = outcome.delivery
    assert d.acked == 3_000
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert outcome.checks == {"killed 1 times mid-stream": True,
                              "no unique key on the sink that would hide duplicates": True}, outcome.notes


@pytest.mark.slow
def test_transactional_copier_killed_once_copies_every_record_once_in_key_order(cluster):
    outcome = transactional.run(records=3_000, kills=1)
    d = outcome.delivery
    assert d.acked == 3_000
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()
    assert outcome.checks == {"killed 1 times mid-stream": True}, outcome.notes

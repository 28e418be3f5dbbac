"""one-to-one: readings become sink rows with event time and Kafka coordinates."""

import datetime as dt

from helpers import reading
from kafka_patterns.jobs import readings_to_postgres
from kafka_patterns.runtime import spark as kp_spark


def test_rows_carry_every_column_of_the_sink_with_event_time(kafka_records):
    records = kafka_records([reading(1, ts=1_767_225_600_000)])
    rows = readings_to_postgres.to_rows(kp_spark.valid_readings(records)).collect()
    assert len(rows) == 1
    row = rows[0]
    assert tuple(row.asDict()) == readings_to_postgres.COLUMNS
    assert row.event_time.replace(tzinfo=dt.UTC) == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert (row.kafka_partition, row.kafka_offset, row.seq) == (0, 0, 1)

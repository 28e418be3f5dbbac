"""single partition, total order: the job keeps Kafka's offset order in its rows, and
the accounting detects a break of the global order that per-key order would not."""

from helpers import reading
from kafka_patterns.jobs import readings_to_postgres
from kafka_patterns.runtime import spark as kp_spark
from pattern_harness.delivery import account


def test_rows_keep_offsets_of_the_single_partition(kafka_records):
    values = [reading(0, sensor="sensor-00"), reading(1, sensor="sensor-01"), reading(2, sensor="sensor-00")]
    records = kafka_records(values, topic="weather.readings.ordered")
    rows = readings_to_postgres.to_rows(kp_spark.valid_readings(records))
    got = [(r.kafka_partition, r.kafka_offset, r.sensor, r.seq) for r in rows.collect()]
    assert got == [(0, 0, "sensor-00", 0), (0, 1, "sensor-01", 1), (0, 2, "sensor-00", 2)]


def test_global_order_break_across_keys_is_counted():
    acked = [("a", 0), ("b", 1), ("a", 2)]
    swapped = [("a", 0), ("a", 2), ("b", 1)]
    assert account(acked, swapped, order="per-key").reordered == 0
    assert account(acked, swapped, order="total").reordered == 1


def test_job_is_declared_with_total_order():
    from kafka_patterns.config import catalogue

    job = catalogue.job("total-order")
    assert job.promise.order == "total"
    assert [catalogue.topics()[t].partitions for t in job.inputs] == [1]
    assert job.module == readings_to_postgres.__name__

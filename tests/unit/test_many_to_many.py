"""many-to-many: merged rows carry their source topic; accounting keys per producer."""

from helpers import reading
from kafka_patterns.jobs import many_to_many
from kafka_patterns.runtime import spark as kp_spark
from pattern_harness.delivery import account
from pattern_harness.scenarios import many_to_many as scenario


def test_merged_rows_are_tagged_with_the_producer_topic(spark, kafka_records):
    a = kafka_records([reading(1), reading(2)], topic="fanin.station-a")
    b = kafka_records([reading(1_000_001), "{bad"], topic="fanin.station-b")
    rows = many_to_many.merge(kp_spark.valid_readings(a.unionByName(b))).collect()
    assert tuple(rows[0].asDict()) == many_to_many.COLUMNS
    assert sorted((r.source_topic, r.seq) for r in rows) == [
        ("fanin.station-a", 1), ("fanin.station-a", 2), ("fanin.station-b", 1_000_001)]


def test_order_is_judged_per_producer_and_sensor():
    a, b = scenario.record_key("fanin.station-a", "s1"), scenario.record_key("fanin.station-b", "s1")
    acked = [(a, 1), (a, 2), (b, 1_000_001)]
    interleaved = [(b, 1_000_001), (a, 1), (a, 2)]
    assert account(acked, interleaved, order="per-key").reordered == 0
    assert account(acked, [(a, 2), (a, 1), (b, 1_000_001)], order="per-key").reordered == 1

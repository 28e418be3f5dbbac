"""content-based filtering: routing by predicate, dead letters with reasons, and the
scenario's expected routes."""

from pyspark.sql import functions as F

from helpers import reading
from kafka_patterns.jobs import content_filter as cf
from kafka_patterns.runtime import readings
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness.scenarios import content_filter as scenario

DEAD = "dead.t"
JOB = "content-filter"


def routed(kafka_records, values):
    rows = cf.route(kp_spark.parse_readings(kafka_records(values)), DEAD, JOB).collect()
    return [(r.topic, r.key, {h.key: bytes(h.value).decode() for h in r.headers}) for r in rows]


def test_readings_go_to_the_topic_of_each_matching_predicate(kafka_records):
    values = [reading(1, temperature=30.0), reading(2, temperature=29.9), reading(3, temperature=0.0),
              reading(4, temperature=-12.5, sensor="sensor-02"), reading(5, temperature=15.0)]
    got = sorted((t, k) for t, k, _ in routed(kafka_records, values))
    assert got == [(cf.FROST_TOPIC, "sensor-01"), (cf.FROST_TOPIC, "sensor-02"), (cf.HEAT_TOPIC, "sensor-01")]


def test_the_routed_value_is_the_original_reading(kafka_records):
    rows = cf.route(kp_spark.parse_readings(kafka_records([reading(9, temperature=41.0)])), DEAD, JOB).collect()
    assert len(rows) == 1
    r, reason = readings.parse(rows[0].value)
    assert reason is None and (r.seq, r.temperature) == (9, 41.0)


def test_malformed_records_are_dead_lettered_with_reason_and_origin(kafka_records):
    values = ["{not json", reading(1, temperature=99.0), reading(2, temperature=35.0)]
    got = routed(kafka_records, values)
    dead = [h for t, _, h in got if t == DEAD]
    assert [h["reason"] for h in dead] == ["not JSON", "temperature out of range"]
    assert [(h["source.topic"], h["source.partition"], h["source.offset"], h["job"]) for h in dead] == [
        ("weather.readings", "0", "0", JOB), ("weather.readings", "0", "1", JOB)]
    assert [t for t, _, _ in got].count(cf.HEAT_TOPIC) == 1


def test_python_predicates_mirror_the_spark_ones_and_expected_routes():
    rs = [Reading("r", "s", "st", i, t, 50.0, 0) for i, t in enumerate([30.0, 29.99, 0.0, 0.01, -5.0])]
    want = scenario.expected_routes(rs)
    assert want == {cf.HEAT_TOPIC: {("s", 0)}, cf.FROST_TOPIC: {("s", 2), ("s", 4)}}


def test_one_scan_of_the_source_and_no_union_so_real_time_mode_takes_it(kafka_records):
    """Spark's real-time mode refuses a query that unions a source with itself: the
    routes and the dead letters come out of one projection."""
    routed = cf.route(kp_spark.parse_readings(kafka_records([reading(1, temperature=41.0)])), DEAD, JOB)
    plan = routed._jdf.queryExecution().optimizedPlan().toString()
    assert "Union" not in plan
    assert "Generate" in plan  # the explode of each record's targets


def test_a_record_matching_two_routes_gives_two_rows_and_a_bad_one_a_single_letter(spark):
    parsed = spark.createDataFrame(
        [("k1", b"v1", None, "t", 0, 1, 35.0), ("k2", b"v2", "not JSON", "t", 0, 2, None)],
        "key string, raw binary, error string, topic string, partition int, offset long, temperature double")
    hot = F.array(kp_spark.kafka_header("r", F.lit("hot")))
    rows = kp_spark.route_rows(parsed, [("a", F.col("temperature") > 30, hot), ("b", F.lit(True), hot)],
                               "dead", "job").collect()
    assert sorted((r.topic, r.key) for r in rows) == [("a", "k1"), ("b", "k1"), ("dead", "k2")]
    letter = next(r for r in rows if r.topic == "dead")
    assert (b"not JSON" in [h.value for h in letter.headers]) and letter.value == b"v2"

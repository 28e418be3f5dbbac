"""pipes and filters: each stage's transformation on in-memory records, and the
scenario's Python reference."""

import itertools
import json

from helpers import reading
from kafka_patterns.jobs import pipeline
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness.scenarios import pipeline as scenario

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a window boundary


def test_clean_passes_valid_readings_and_dead_letters_the_rest_with_a_reason(kafka_records):
    out = pipeline.clean(kp_spark.parse_readings(kafka_records([reading(1), "{oops", reading(2, humidity=140.0)])),
                         "clean.t", "dead.t", "pipeline-clean").collect()
    by_topic = {}
    for r in out:
        by_topic.setdefault(r.topic, []).append({h.key: bytes(h.value).decode() for h in r.headers})
    assert len(by_topic["clean.t"]) == 1
    assert [h["reason"] for h in by_topic["dead.t"]] == ["not JSON", "humidity out of range"]
    assert {h["job"] for h in by_topic["dead.t"]} == {"pipeline-clean"}


def test_latest_profile_per_station_wins_and_tombstones_delete(spark):
    rows = [(b"station-1", json.dumps({"station": "station-1", "name": "old"}).encode(), 0, 0),
            (b"station-1", json.dumps({"station": "station-1", "name": "new", "region": "r"}).encode(), 0, 1),
            (b"station-2", json.dumps({"station": "station-2", "name": "gone"}).encode(), 1, 0),
            (b"station-2", None, 1, 1),
            (b"user-7", json.dumps({"user": "u"}).encode(), 2, 0)]
    df = spark.createDataFrame(rows, "key binary, value binary, partition int, offset long")
    got = {r.station: (r.name, r.region) for r in pipeline.latest_profiles(df).collect()}
    assert got == {"station-1": ("new", "r")}


def enriched(spark, kafka_records, values) -> dict[str, list]:
    """pipeline.enrich's rows by topic (enriched.t, dead.t), station-1 with a profile."""
    parsed = kp_spark.parse_readings(kafka_records(values))
    profiles = spark.createDataFrame([("station-1", "One", "north", 12.0)], pipeline.profile_schema())
    by_topic: dict[str, list] = {}
    for r in pipeline.enrich(parsed, profiles, "enriched.t", "dead.t", "pipeline-enrich").collect():
        by_topic.setdefault(r.topic, []).append(r)
    return by_topic


def test_enrich_joins_the_station_profile_and_keeps_readings_without_one(spark, kafka_records):
    out = [json.loads(r.value) for r in enriched(spark, kafka_records,
                                                 [reading(1), reading(2, station="station-9")])["enriched.t"]]
    by_seq = {v["seq"]: v for v in out}
    assert (by_seq[1]["name"], by_seq[1]["region"], by_seq[1]["elevation_m"]) == ("One", "north", 12.0)
    assert by_seq[2].get("name") is None and by_seq[2]["station"] == "station-9"


def test_enrich_dead_letters_what_breaks_the_contract_in_the_same_pass(spark, kafka_records):
    by_topic = enriched(spark, kafka_records, [reading(1), "{oops", reading(2, humidity=140.0)])
    assert [json.loads(r.value)["seq"] for r in by_topic["enriched.t"]] == [1]
    letters = [{h.key: bytes(h.value).decode() for h in r.headers} for r in by_topic["dead.t"]]
    assert sorted(h["reason"] for h in letters) == ["humidity out of range", "not JSON"]
    assert {h["job"] for h in letters} == {"pipeline-enrich"}
    assert b"{oops" in [bytes(r.value) for r in by_topic["dead.t"]]


def enriched_records(kafka_records, values):
    return kafka_records([{**v, "region": "north", "name": "One", "elevation_m": 1.0} for v in values],
                         topic="weather.readings.enriched")


def test_aggregate_counts_per_station_and_event_time_window(kafka_records):
    values = [reading(1, ts=T0, temperature=10.0), reading(2, ts=T0 + 9_999, temperature=20.0),
              reading(3, ts=T0 + 10_000, temperature=5.0)]
    out = pipeline.aggregate(pipeline.parse_enriched(enriched_records(kafka_records, values)), "agg.t").collect()
    got = {r.key: json.loads(r.value) for r in out}
    assert set(got) == {f"r1|station-1|{T0}", f"r1|station-1|{T0 + 10_000}"}
    first = got[f"r1|station-1|{T0}"]
    assert (first["n"], first["temperature_sum"], first["temperature_min"], first["temperature_max"]) == (
        2, 30.0, 10.0, 20.0)
    assert first["window_end"] - first["window_start"] == pipeline.WINDOW_MS


def test_sink_keeps_the_highest_count_version_of_each_window(kafka_records):
    def agg(n, total):
        return {"run": "r1", "station": "station-1", "region": "north", "window_start": T0,
                "window_end": T0 + 10_000, "n": n, "temperature_sum": total, "temperature_min": 1.0,
                "temperature_max": 2.0}
    rows = pipeline.window_versions(kafka_records([agg(2, 3.0), agg(5, 8.0), agg(5, 8.0), agg(3, 4.0)]))
    assert tuple(rows.columns) == pipeline.SINK_COLUMNS
    out = pipeline.final_versions(rows.collect())
    n, total = pipeline.SINK_COLUMNS.index("n"), pipeline.SINK_COLUMNS.index("temperature_sum")
    assert [(r[n], r[total]) for r in out] == [(5, 8.0)]


def test_no_pipeline_stage_reads_what_it_writes():
    for job in scenario.PATTERN.jobs:
        assert not set(job.inputs) & set(job.outputs), job.name


def test_each_stage_is_a_job_whose_args_name_it_and_reads_what_the_stage_before_wrote():
    stages = scenario.stages()
    assert list(stages) == list(pipeline.STAGES)
    assert {stage: job.name for stage, job in stages.items()} == {
        "clean": "pipeline-clean", "enrich": "pipeline-enrich", "aggregate": "pipeline-aggregate",
        "sink": "pipeline-sink"}
    jobs = list(stages.values())
    for before, after in itertools.pairwise(jobs):
        assert set(after.inputs) <= set(before.output_topics), (before.name, after.name)


def test_python_windows_and_gaps():
    rs = [Reading("r", "s", "station-1", i, t, 50.0, T0 + ms) for i, (t, ms) in
          enumerate([(1.0, 0), (2.0, 9_999), (4.0, 10_000)])]
    want = scenario.expected_windows(rs)
    assert want == {("station-1", T0): (2, 3.0), ("station-1", T0 + 10_000): (1, 4.0)}
    assert scenario.window_gaps(want, {("station-1", T0): (1, 1.0), ("x", 0): (2, 0.0)}) == (2, 2)


def test_a_duplicated_reading_counts_once_in_its_window(kafka_records):
    values = [reading(1, ts=T0, temperature=10.0), reading(1, ts=T0, temperature=10.0),
              reading(2, ts=T0 + 1, temperature=4.0)]
    out = pipeline.aggregate(pipeline.parse_enriched(enriched_records(kafka_records, values)), "agg.t").collect()
    v = json.loads(out[0].value)
    assert (len(out), v["n"], v["temperature_sum"], v["temperature_min"]) == (1, 2, 14.0, 4.0)


def test_each_stage_writes_what_its_output_topic_schema_declares(spark, kafka_records):
    """enrich and aggregate write records their topics' declared schemas accept (a
    station without a profile included)."""
    from kafka_patterns.config import catalogue, schemas

    stages = scenario.stages()
    by_topic = enriched(spark, kafka_records, [reading(1), reading(2, station="station-9")])
    enriched_values = [json.loads(r.value) for r in by_topic["enriched.t"]]
    aggregated = [json.loads(r.value) for r in pipeline.aggregate(
        pipeline.parse_enriched(enriched_records(kafka_records, [reading(1), reading(2)])), "agg.t").collect()]
    for stage, values in (("enrich", enriched_values), ("aggregate", aggregated)):
        (topic,) = stages[stage].output_topics
        validator = schemas.validator(catalogue.schema_of(topic))
        assert values and all(validator.is_valid(v) for v in values), (stage, values)

"""sql-stream: the Python reference, the shipped SQL against it (on a static DataFrame and
as a stream with its watermark), the sink's record shape, and that a new SQL stream
needs a catalogue entry and a .sql file only."""

import copy
import inspect
import json
import random

import pytest
from pyspark.sql import functions as F

from helpers import reading
from kafka_patterns.config import catalogue, schemas
from kafka_patterns.jobs import sql_stream
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness import generator
from pattern_harness.scenarios import sql_stream as scenario

JOB = catalogue.job(scenario.JOBS[0])
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a window boundary


def hot(seq: int, ts: int, temperature: float = 30.0, station: str = "station-1") -> Reading:
    return Reading("r1", f"sensor-{seq % 3}", station, seq, temperature, 50.0, ts)


# --- the reference ----------------------------------------------------------------------

def test_the_reference_filters_windows_and_aggregates_per_station():
    rs = [hot(0, T0 + 1_000, 30.0), hot(1, T0 + 9_999, 26.0), hot(2, T0 + 5_000, 25.0),  # 25.0 is not above
          hot(3, T0 + 2_000, 40.0, station="station-2"), hot(4, T0 + 10_000, 31.0), hot(5, T0 + 45_000, 27.0)]
    want = scenario.expected_windows([rs])
    # The watermark is 45 s - 10 s = 35 s: the windows ending at 10 s and 20 s are closed.
    assert sorted(want.windows) == [("station-1", T0), ("station-1", T0 + 10_000), ("station-2", T0)]
    w = want.windows[("station-1", T0)]
    assert (w.readings, w.avg_temperature, w.max_temperature, w.window_end) == (2, 28.0, 30.0, T0 + 10_000)
    assert list(want.open_windows) == [("station-1", T0 + 40_000)]
    assert want.kept == 5 and want.late == []


def test_a_reading_for_a_window_the_watermark_closed_in_an_earlier_run_is_late():
    first = [hot(0, T0 + 1_000), hot(1, T0 + 30_000)]  # watermark after it: 20 s
    second = [hot(2, T0 + 19_000), hot(3, T0 + 25_000), hot(4, T0 + 41_000)]
    want = scenario.expected_windows([first, second])
    assert [r.seq for r in want.late] == [2]  # its window ended at 20 s (closed); 25 s's was still open
    assert want.windows[("station-1", T0 + 20_000)].readings == 1


def test_the_watermark_follows_the_readings_the_filter_keeps():
    """Spark applies `temperature > 25` below the watermark (it does not read the event
    time), so a cold reading's event time does not close a window."""
    want = scenario.expected_windows([[hot(0, T0 + 1_000), hot(1, T0 + 60_000, temperature=10.0)]])
    assert want.windows == {} and list(want.open_windows) == [("station-1", T0)]


def test_the_event_clock_keeps_each_phase_inside_its_windows():
    clock = scenario.event_clock(T0, 600, 6)
    rng = random.Random(1)
    ts = [generator.make_reading("r", i, 20, 4, rng, clock(i)).ts for i in range(600)]
    assert min(ts) >= T0 and max(ts) < T0 + 60_000
    assert len({t // scenario.WINDOW_MS for t in ts}) == 6


def test_a_written_row_matches_its_window_to_rounding_only():
    w = scenario.Window("r1", "station-1", T0, T0 + 10_000, 3, 100 / 3, 40.0)
    row = {"key": "station-1", "run": "r1", "station": "station-1", "window_start": T0, "window_end": T0 + 10_000,
           "readings": 3, "avg_temperature": 33.333333333333336, "max_temperature": 40.0}
    assert w.matches(row)
    assert not w.matches({**row, "readings": 4})
    assert not w.matches({**row, "avg_temperature": 33.4})
    assert not w.matches({**row, "key": "station-2"})


# --- the shipped SQL against the reference -----------------------------------------------

def readings_of(n: int, seed: int, start: int, late: float = 0.0, seq_start: int = 0) -> list[Reading]:
    rng, clock = random.Random(seed), scenario.event_clock(start, n, 3)
    return [generator.make_reading("r1", seq_start + i, 20, 4, rng, clock(i), rng.random() < late) for i in range(n)]


def as_rows(written) -> dict:
    return {(r["station"], r["window_start"]): r for r in written}


def test_the_sql_on_a_static_dataframe_gives_every_window_of_the_reference(spark, kafka_records):
    """Batch: no watermark applies, every window is a result (the closed and the open)."""
    rs = readings_of(300, seed=3, start=T0)
    parsed = kp_spark.valid_readings(kafka_records([json.loads(r.to_json()) for r in rs], topic="sql.readings"))
    result = sql_stream.run_sql(spark, parsed, sql_stream.query_text(JOB))
    got = as_rows(json.loads(r.value) | {"_key": r.key} for r in sql_stream.to_records(result, "out").collect())
    want = scenario.expected_windows([rs])
    every = {**want.windows, **want.open_windows}
    assert got.keys() == every.keys() and len(every) > 4
    assert all(every[i].matches(row) and row["_key"] == row["station"] for i, row in got.items())
    validator = schemas.validator(catalogue.schema_of(sql_stream.output_topic(JOB)))
    assert all(validator.is_valid({k: v for k, v in row.items() if k != "_key"}) for row in got.values())


def test_the_sql_as_a_stream_writes_each_closed_window_once_and_drops_late_readings(spark, tmp_path):
    """Two runs of a streaming query (available-now, one micro-batch each) from files, as
    the scenario runs the job from Kafka: the result is the reference's, watermark and all."""
    source, written = tmp_path / "in", []
    source.mkdir()
    phases = [readings_of(200, seed=4, start=T0),
              readings_of(200, seed=5, start=T0 + 30_000, late=0.2, seq_start=200)]
    records = spark.readStream.text(str(source)).select(
        F.lit(None).cast("binary").alias("key"), F.col("value").cast("binary").alias("value"),
        F.lit("sql.readings").alias("topic"), F.lit(0).alias("partition"), F.lit(0).cast("long").alias("offset"),
        F.current_timestamp().alias("timestamp"))
    rows = sql_stream.to_records(
        sql_stream.run_sql(spark, kp_spark.valid_readings(records), sql_stream.query_text(JOB)), "out")
    for i, phase in enumerate(phases):
        (source / f"phase-{i}.json").write_bytes(b"\n".join(r.to_json() for r in phase))
        query = (rows.writeStream.outputMode("append").trigger(availableNow=True)
                 .option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .foreachBatch(lambda df, _id: written.extend(json.loads(r.value) for r in df.collect())).start())
        assert query.awaitTermination(120), "the streaming query did not end within 120 s"
    want = scenario.expected_windows(phases)
    assert want.late and want.open_windows  # the run has something to drop and something to hold back
    got = as_rows(written)
    assert len(got) == len(written), "a window written twice"
    assert got.keys() == want.windows.keys()
    assert all(want.windows[i].matches(row) for i, row in got.items())


# --- the sink's records -------------------------------------------------------------------

def test_every_selected_column_goes_into_the_value_and_key_is_the_record_key(spark):
    result = spark.createDataFrame([("station-1", 3, 1.5)], "key string, n int, `avg t` double")
    (row,) = sql_stream.to_records(result, "out.topic").collect()
    assert (row.topic, row.key) == ("out.topic", "station-1")
    assert json.loads(row.value) == {"key": "station-1", "n": 3, "avg t": 1.5}


def test_a_query_without_a_key_column_fails_naming_it(spark):
    with pytest.raises(ValueError, match=r"selects no 'key' column.*station"):
        sql_stream.to_records(spark.createDataFrame([("s",)], "station string"), "out")


def test_the_view_is_gone_once_the_query_is_analysed(spark, kafka_records):
    parsed = kp_spark.valid_readings(kafka_records([reading(1, temperature=30.0)]))
    result = sql_stream.run_sql(spark, parsed, "SELECT sensor AS key, temperature FROM readings")
    assert result.count() == 1
    assert not spark.catalog.tableExists(sql_stream.VIEW)


# --- a new SQL stream is a catalogue entry and a .sql file ----------------------------------

def test_every_sql_job_names_an_existing_file_and_runs_the_generic_module():
    sql_jobs = [j for j in catalogue.job_specs().values() if j.sql]
    assert sql_jobs
    for job in sql_jobs:
        assert job.module == sql_stream.__name__, job.name
        assert job.sql_file.is_file() and job.sql_file.suffix == ".sql", job.name
        assert len(job.output_topics) == 1 and job.deadletter, job.name
    assert all(j.sql for j in catalogue.job_specs().values() if j.module == sql_stream.__name__)


def test_the_module_holds_no_query_of_its_own():
    """What the shipped query reads and writes appears only in its .sql file."""
    source = inspect.getsource(sql_stream)
    code = source.split('"""', 2)[2]  # past the module's docstring
    for word in ("station", "temperature", "window", "WATERMARK", "GROUP BY", "SELECT", "heat"):
        assert word not in code, word


def test_a_job_naming_a_missing_sql_file_fails_naming_the_key(cat):
    bad = copy.deepcopy(cat)
    i, entry = next((i, j) for i, j in enumerate(bad["jobs"]) if j.get("sql"))
    entry["sql"] = "sql/no_such_query.sql"
    with pytest.raises(catalogue.CatalogueError, match=rf"jobs\[{i}\]\.sql: 'sql/no_such_query.sql'"):
        catalogue.validate(bad)


def test_the_catalogue_refuses_a_query_file_outside_sql(cat):
    bad = copy.deepcopy(cat)
    next(j for j in bad["jobs"] if j.get("sql"))["sql"] = "../catalogue.yaml"
    with pytest.raises(catalogue.CatalogueError, match=r"\.sql: '\.\./catalogue\.yaml' does not match"):
        catalogue.validate(bad)


def test_a_job_without_sql_fails_naming_the_key():
    with pytest.raises(catalogue.CatalogueError, match=r"jobs\.one-to-one\.sql: not set"):
        catalogue.job("one-to-one").sql_file  # noqa: B018 - the property raises

"""time semantics: the same readings windowed by event, ingestion and processing
time; the scenario's late/on-time split."""

import datetime as dt
from types import SimpleNamespace

import pytest

from helpers import reading
from kafka_patterns.jobs import time_semantics as ts_job
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness.scenarios import time_semantics as scenario

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z; kafka_records stamps record i at T0 + i s


def counts(kafka_records, values, semantics):
    rows = ts_job.windowed_counts(kp_spark.valid_readings(kafka_records(values)), semantics).collect()
    return {(r.run, r.window_start): r.n for r in rows}, rows


def test_event_time_windows_follow_the_reading_timestamp(kafka_records):
    values = [reading(1, ts=T0 + 1_000), reading(2, ts=T0 + 9_000), reading(3, ts=T0 - 300_000), "{bad"]
    got, rows = counts(kafka_records, values, "event")
    assert got == {("r1", T0): 2, ("r1", T0 - 300_000): 1}
    assert tuple(rows[0].asDict()) == ts_job.COLUMNS
    assert {r.semantics for r in rows} == {"event"}


def test_ingestion_time_windows_follow_the_record_timestamp_not_the_event_time(kafka_records):
    # Records stamped T0, T0+1s, ..., T0+11s by the (fake) broker; event times far apart.
    values = [reading(i, ts=T0 - 600_000 * i) for i in range(12)]
    got, _ = counts(kafka_records, values, "ingestion")
    assert got == {("r1", T0): 10, ("r1", T0 + 10_000): 2}


def test_processing_time_puts_everything_in_the_current_window(kafka_records):
    before = dt.datetime.now(dt.UTC).timestamp() * 1000
    got, rows = counts(kafka_records, [reading(1, ts=T0), reading(2, ts=T0 - 900_000)], "processing")
    assert sum(got.values()) == 2 and len(got) == 1
    assert before - ts_job.WINDOW_MS <= rows[0].window_start <= dt.datetime.now(dt.UTC).timestamp() * 1000


def test_an_unknown_semantics_is_refused(kafka_records):
    with pytest.raises(ValueError, match="one of"):
        ts_job.windowed_counts(kp_spark.valid_readings(kafka_records([reading(1)])), "wall")


def test_dropped_rows_are_summed_over_the_query_progress():
    q = SimpleNamespace(recentProgress=[{"stateOperators": [{"numRowsDroppedByWatermark": 3}]},
                                        {"stateOperators": []}, {"stateOperators": [{"numRowsDroppedByWatermark": 2}]}])
    assert ts_job.dropped_by_watermark(q) == 5


def test_late_means_its_window_closed_before_the_watermark():
    rs = [Reading("r", "s", "st", i, 1.0, 1.0, T0 + ms) for i, ms in enumerate([-200_000, 5_000, 10_000, 12_000])]
    on_time, late = scenario.split_late(rs, watermark_ms=T0 + 10_000)
    assert [r.seq for r in late] == [0, 1] and [r.seq for r in on_time] == [2, 3]
    assert scenario.event_windows(on_time) == {T0 + 10_000: 2}
    assert scenario.gaps(scenario.event_windows(rs), scenario.event_windows(on_time)) == (2, 0)


def test_each_semantics_reads_its_input_by_the_topics_timestamp_type_not_its_place():
    import dataclasses

    from kafka_patterns.config import catalogue

    job = catalogue.job("time-semantics")
    want = {"event": "weather.readings", "ingestion": "weather.readings.ingest", "processing": "weather.readings"}
    assert ts_job.topic_of(job) == want
    assert ts_job.topic_of(dataclasses.replace(job, inputs=job.inputs[::-1])) == want
    with pytest.raises(catalogue.CatalogueError, match=r"jobs\.time-semantics\.inputs: expected one topic "
                                                       r"with message\.timestamp\.type LogAppendTime"):
        ts_job.topic_of(dataclasses.replace(job, inputs=("weather.readings", "work.queue")))

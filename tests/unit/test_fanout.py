"""pub-sub fan-out: the aggregators' partial aggregates and the scenario's Python reference."""

import pytest

from helpers import reading
from kafka_patterns.jobs import fanout
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness.scenarios import fanout as scenario


def values():
    return [reading(1, temperature=10.0), reading(2, temperature=14.0), reading(3, sensor="sensor-02"),
            reading(4, run="other", temperature=-3.0), "{not json"]


def test_averager_counts_and_sums_per_run_and_sensor(kafka_records):
    rows = fanout.averages(kp_spark.valid_readings(kafka_records(values()))).collect()
    assert {(r.run, r.sensor): (r.n, r.temperature_sum) for r in rows} == {
        ("r1", "sensor-01"): (2, 24.0), ("r1", "sensor-02"): (1, 20.0), ("other", "sensor-01"): (1, -3.0)}
    assert tuple(rows[0].asDict()) == fanout.AVG_COLUMNS


def test_minmax_counts_min_and_max_per_run_and_sensor(kafka_records):
    rows = fanout.min_max(kp_spark.valid_readings(kafka_records(values()))).collect()
    assert {(r.run, r.sensor): (r.n, r.temperature_min, r.temperature_max) for r in rows} == {
        ("r1", "sensor-01"): (2, 10.0, 14.0), ("r1", "sensor-02"): (1, 20.0, 20.0),
        ("other", "sensor-01"): (1, -3.0, -3.0)}
    assert tuple(rows[0].asDict()) == fanout.MINMAX_COLUMNS


def test_an_unknown_role_is_refused_with_usage(capsys):
    with pytest.raises(SystemExit) as refused:
        fanout.main(["--job", "fanout-averager", "--role", "summer"])
    assert refused.value.code == 2
    assert "'averager', 'minmax'" in capsys.readouterr().err


def test_python_reference_and_gap_counting():
    rs = [Reading("r", "s1", "st", i, t, 50.0, 0) for i, t in enumerate([1.0, 3.0, 8.0])]
    assert scenario.expected_aggregates(rs) == {"s1": (3, 4.0, 1.0, 8.0)}
    assert scenario.count_gaps({"a": 3, "b": 2}, {"a": 2, "b": 4, "c": 1}) == (1, 3)

"""batch: per-(run, sensor) aggregates, the offset range a run reads, and the
scenario's contiguity check."""

import pytest

from helpers import reading
from kafka_patterns.jobs import batch_aggregate
from kafka_patterns.runtime import readings
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.readings import Reading
from pattern_harness.scenarios import batch


def test_aggregate_counts_sums_and_last_seq_per_run_and_sensor(kafka_records):
    values = [reading(1, temperature=10.0), reading(2, temperature=14.0), reading(7, sensor="sensor-02"),
              reading(3, run="other"), "{not json"]
    rows = batch_aggregate.aggregate(kp_spark.valid_readings(kafka_records(values))).collect()
    got = {(r.run, r.sensor): (r.n, r.temperature_sum, r.temperature_min, r.temperature_max, r.last_seq)
           for r in rows}
    assert got == {("r1", "sensor-01"): (2, 24.0, 10.0, 14.0, 2), ("r1", "sensor-02"): (1, 20.0, 20.0, 20.0, 7),
                   ("other", "sensor-01"): (1, 20.0, 20.0, 20.0, 3)}
    assert tuple(rows[0].asDict()) == batch_aggregate.AGG_COLUMNS


def test_first_run_starts_at_the_initial_offsets_then_at_the_stored_end():
    ends = {"t": {0: 10, 1: 5}}
    assert batch_aggregate.plan_range({}, {"t": {0: 4}}, ends) == ({"t": {0: 4, 1: 0}}, ends)
    assert batch_aggregate.plan_range({"t": {0: 8, 1: 5}}, {"t": {0: 4}}, ends) == ({"t": {0: 8, 1: 5}}, ends)


def test_nothing_new_is_an_empty_range():
    assert batch_aggregate.is_empty({"t": {0: 3, 1: 5}}, {"t": {0: 3, 1: 5}})
    assert not batch_aggregate.is_empty({"t": {0: 3, 1: 5}}, {"t": {0: 3, 1: 6}})


def test_a_stored_start_beyond_the_end_is_refused():
    with pytest.raises(ValueError, match=r"t\[0\]: stored start 9 is beyond the end 5"):
        batch_aggregate.plan_range({"t": {0: 9}}, {}, {"t": {0: 5}})


def test_offsets_option_parses_spark_json_and_earliest():
    assert batch_aggregate.parse_offsets('{"t": {"0": 4, "2": 7}}') == {"t": {0: 4, 2: 7}}
    assert batch_aggregate.parse_offsets("earliest") == {}
    with pytest.raises(ValueError, match="latest"):
        batch_aggregate.parse_offsets("latest")


def test_contiguity_check_accepts_adjacent_ranges_and_rejects_gaps_and_overlaps():
    first, end1, end2 = {"t": {0: 0, 1: 2}}, {"t": {0: 5, 1: 4}}, {"t": {0: 9, 1: 4}}
    good = [(1, "t", 0, 0, 5), (1, "t", 1, 2, 4), (2, "t", 0, 5, 9), (2, "t", 1, 4, 4)]
    assert batch.contiguous(good, first, [end1, end2])
    gap = [*good[:2], (2, "t", 0, 6, 9), good[3]]
    overlap = [*good[:2], (2, "t", 0, 4, 9), good[3]]
    extra_run = [*good, (3, "t", 0, 9, 9), (3, "t", 1, 4, 4)]
    for bad in (gap, overlap, extra_run, good[:2]):
        assert not batch.contiguous(bad, first, [end1, end2])


def test_expected_aggregates_are_python_sums_over_the_readings():
    rs = [Reading("r", "s1", "st", 0, 1.5, 50, 0), Reading("r", "s1", "st", 3, 2.5, 50, 0),
          Reading("r", "s2", "st", 1, 4.0, 50, 0)]
    assert readings.totals_per_sensor(rs) == {"s1": (2, 4.0, 3), "s2": (1, 4.0, 1)}

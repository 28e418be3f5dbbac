"""self-managed offsets: the batch fold (state deltas, next offsets, malformed count),
where a consumer starts, and when a bounded run is done."""

import json

from helpers import reading
from kafka_patterns.jobs import self_managed_offsets as smo


def rec(part: int, offset: int, value) -> tuple:
    return ("weather.readings", part, offset, json.dumps(value).encode() if isinstance(value, dict) else value)


def test_fold_sums_per_sensor_and_records_the_next_offset_per_partition():
    batch = [rec(0, 10, reading(1, temperature=10.0)), rec(0, 11, reading(5, temperature=12.5)),
             rec(2, 3, reading(2, sensor="sensor-02")), rec(2, 4, b"{broken")]
    deltas, offsets, malformed = smo.fold(batch)
    assert deltas == {"sensor-01": [2, 22.5, 5], "sensor-02": [1, 20.0, 2]}
    assert offsets == {("weather.readings", 0): 12, ("weather.readings", 2): 5}
    assert malformed == [(3, "not JSON")], "a malformed record advances the offset and is set aside, not applied"


def test_fold_does_not_apply_records_at_or_past_the_until_offsets():
    batch = [rec(0, 8, reading(1)), rec(0, 9, reading(2)), rec(0, 10, reading(3)), rec(1, 0, reading(4))]
    deltas, offsets, _ = smo.fold(batch, until={0: 10, 1: 5})
    assert deltas == {"sensor-01": [3, 60.0, 4]}
    assert offsets == {("weather.readings", 0): 10, ("weather.readings", 1): 1}


def test_start_positions_prefer_stored_offsets_then_the_first_start_offsets():
    assert smo.start_positions(3, stored={0: 40}, initial={0: 7, 1: 9}) == {0: 40, 1: 9, 2: 0}


def test_a_bounded_run_is_done_when_every_partition_reached_its_end():
    assert smo.reached({0: 5, 1: 7}, {0: 5, 1: 7})
    assert not smo.reached({0: 5, 1: 6}, {0: 5, 1: 7})
    assert not smo.reached({0: 5}, None), "without --until-offsets the consumer runs until stopped"

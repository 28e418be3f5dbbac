"""changelog-state: the state update, the batch (outputs, changelog writes, letters),
the rebuild from a changelog, and the scenario's own Python reference and comparison."""

import json

from helpers import FakeMessage, reading
from kafka_patterns.jobs import changelog_state as job
from kafka_patterns.jobs.changelog_state import SensorState
from kafka_patterns.runtime import readings
from pattern_harness.scenarios import changelog_state as scenario


def parsed(seq: int, **kw) -> readings.Reading:
    r, reason = readings.parse(json.dumps(reading(seq, **kw)).encode())
    assert reason is None
    return r


def msg(seq: int, offset: int = 0, **kw) -> FakeMessage:
    return FakeMessage(json.dumps(reading(seq, **kw)).encode(), offset=offset)


def test_update_counts_sums_and_keeps_min_max_and_the_highest_seq():
    s = job.update(None, parsed(3, temperature=20.0))
    assert s == SensorState(1, 20.0, 20.0, 20.0, 3)
    s = job.update(s, parsed(5, temperature=-4.5))
    s = job.update(s, parsed(4, temperature=30.0))
    assert s == SensorState(3, 45.5, -4.5, 30.0, 5), "a late lower seq does not move last_seq back"


def test_a_batch_writes_one_output_per_reading_and_the_last_state_per_sensor():
    states = {"sensor-01": SensorState(2, 30.0, 10.0, 20.0, 1)}
    before = dict(states)
    batch = job.apply(states, [msg(2, 0, temperature=25.0), msg(0, 1, sensor="sensor-02", temperature=5.0),
                               FakeMessage(b"{broken", offset=2), msg(3, 3, temperature=5.0)])
    assert [(r.record_id, s.count) for r, s in batch.totals] == [(("sensor-01", 2), 3), (("sensor-02", 0), 1),
                                                                 (("sensor-01", 3), 4)]
    assert batch.changed == {"sensor-01": SensorState(4, 60.0, 5.0, 25.0, 3),
                             "sensor-02": SensorState(1, 5.0, 5.0, 5.0, 0)}
    assert [(m.offset(), reason) for m, reason in batch.bad] == [(2, "not JSON")]
    assert states == before, "the state is adopted by the caller once written, not by apply"


def test_an_output_is_the_reading_itself_with_the_state_after_it():
    r, s = parsed(7, temperature=21.5), SensorState(1, 21.5, 21.5, 21.5, 7)
    value = job.total_value(r, s)
    assert readings.parse(value) == (r, None), "a reader identifies the reading the output is for"
    assert json.loads(value)["state"] == {"count": 1, "sum": 21.5, "min": 21.5, "max": 21.5, "last_seq": 7}


def test_rebuild_keeps_the_last_value_per_key_and_drops_tombstoned_keys():
    a1, a2, b = SensorState(1, 1.0, 1.0, 1.0, 0), SensorState(2, 3.0, 1.0, 2.0, 1), SensorState(1, 9.0, 9.0, 9.0, 4)
    changelog = [(b"sensor-a", a1.to_json()), (b"sensor-b", b.to_json()), (b"sensor-a", a2.to_json()),
                 (b"sensor-c", a1.to_json()), (b"sensor-c", None)]
    assert job.rebuild(changelog) == {"sensor-a": a2, "sensor-b": b}


def test_a_state_survives_its_changelog_value():
    s = SensorState(3, 61.25, -2.5, 40.0, 17)
    assert job.rebuild([(b"s", s.to_json())]) == {"s": s}


def test_the_reference_merges_the_state_before_with_the_runs_readings():
    before = {"sensor-01": SensorState(2, 30.0, 10.0, 20.0, 9), "sensor-09": SensorState(1, 1.0, 1.0, 1.0, 0)}
    run = [parsed(10, temperature=25.0), parsed(11, temperature=5.0), parsed(0, sensor="sensor-02", temperature=3.0)]
    assert scenario.expected_state(before, run) == {
        "sensor-01": SensorState(4, 60.0, 5.0, 25.0, 11),
        "sensor-02": SensorState(1, 3.0, 3.0, 3.0, 0),
        "sensor-09": SensorState(1, 1.0, 1.0, 1.0, 0)}


def test_the_job_and_the_reference_agree_on_a_stream_replayed_batch_by_batch():
    stream = [msg(i, i, sensor=f"sensor-{i % 3:02d}", temperature=(i * 7.3) % 41 - 10) for i in range(60)]
    states: dict[str, SensorState] = {}
    for k in range(0, len(stream), 7):
        states.update(job.apply(states, stream[k:k + 7]).changed)
    valid = [readings.parse(m.value())[0] for m in stream]
    assert scenario.state_differences(states, scenario.expected_state({}, valid)) == []


def test_state_differences_name_the_sensor_and_tolerate_only_float_rounding():
    want = {"s1": SensorState(2, 0.3, 0.1, 0.2, 1), "s2": SensorState(1, 1.0, 1.0, 1.0, 0)}
    assert scenario.state_differences({"s1": SensorState(2, 0.1 + 0.2, 0.1, 0.2, 1), **{"s2": want["s2"]}},
                                      want) == []
    found = {"s1": SensorState(3, 0.3, 0.1, 0.2, 1), "s3": SensorState(1, 1.0, 1.0, 1.0, 0)}
    diffs = scenario.state_differences(found, want)
    assert [d.split(":")[0] for d in diffs] == ["s1", "s2", "s3"]
    assert "missing" in diffs[1] and "unexpected" in diffs[2]


def test_the_changelog_and_the_output_hold_what_their_topics_schemas_declare():
    from kafka_patterns.config import catalogue, schemas

    spec = catalogue.job("changelog-state")
    r, s = parsed(7, temperature=21.5), SensorState(2, 40.0, 18.5, 21.5, 7)
    for topic, value in ((spec.state[0], s.to_json()), (spec.output_topics[0], job.total_value(r, s))):
        schemas.validator(catalogue.schema_of(topic)).validate(json.loads(value))

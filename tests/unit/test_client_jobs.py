"""Pure parts of the client jobs."""

from helpers import FakeMessage
from kafka_patterns.jobs import at_most_once, transactional_copier
from kafka_patterns.readings import Reading

TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: event time inside the reading contract's bounds


def test_at_most_once_rows_skip_malformed_values():
    good = Reading("r1", "sensor-01", "station-1", 4, 20.0, 50.0, TS).to_json()
    assert at_most_once.rows([FakeMessage(good), FakeMessage(b"{oops")]) == [("r1", "sensor-01", 4)]


def test_copier_copies_values_verbatim():
    assert transactional_copier.copy_value(b'{"a":1}') == b'{"a":1}'


def test_request_reply_answers_in_fahrenheit_and_rejects_bad_requests():
    from kafka_patterns.jobs import request_reply

    assert request_reply.answer(b'{"sensor": "s1", "celsius": 100}') == b'{"sensor": "s1", "fahrenheit": 212.0}'
    assert b"bad request" in request_reply.answer(b"{}")
    assert request_reply.reply_headers([("correlation-id", b"c1"), ("reply-to", b"rpc.x")], "rpc.replies") == (
        "rpc.x", [("correlation-id", b"c1")])


def test_self_managed_offsets_fold_counts_per_sensor_and_next_offsets():
    from kafka_patterns.jobs import self_managed_offsets

    r = [Reading("r", "sensor-01", "s", i, 10.0 + i, 50.0, TS).to_json() for i in range(3)]
    t = "weather.readings"
    deltas, offsets, malformed = self_managed_offsets.fold([(t, 0, 5, r[0]), (t, 0, 6, r[1]), (t, 1, 9, b"bad"),
                                                            (t, 1, 10, r[2])])
    assert deltas == {"sensor-01": [3, 33.0, 2]}
    assert offsets == {("weather.readings", 0): 7, ("weather.readings", 1): 11}
    assert malformed == 1


def test_replay_aggregate_counts_and_means_per_sensor():
    from kafka_patterns.jobs import replay

    rs = [Reading("r", s, "x", i, t, 50.0, TS) for i, (s, t) in enumerate([("a", 10.0), ("a", 20.0), ("b", -1.5)])]
    assert replay.aggregate(rs) == {"a": (2, 15.0), "b": (1, -1.5)}

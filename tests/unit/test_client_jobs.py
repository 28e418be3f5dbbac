"""Pure parts of the client jobs."""

from helpers import FakeMessage
from kafka_patterns.jobs import at_most_once, transactional_copier
from kafka_patterns.runtime.readings import Reading

TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: event time inside the reading contract's bounds


def test_at_most_once_rows_set_malformed_values_aside_with_the_reason():
    good = Reading("r1", "sensor-01", "station-1", 4, 20.0, 50.0, TS).to_json()
    bad = FakeMessage(b"{oops")
    assert at_most_once.rows([FakeMessage(good), bad]) == ([("r1", "sensor-01", 4)], [(bad, "not JSON")])


def test_copier_copies_values_verbatim():
    assert transactional_copier.copy_value(b'{"a":1}') == b'{"a":1}'


def test_request_reply_answers_in_fahrenheit_and_rejects_bad_requests():
    from kafka_patterns.jobs import request_reply

    assert request_reply.answer(b'{"sensor": "s1", "celsius": 100}') == b'{"sensor": "s1", "fahrenheit": 212.0}'
    assert b"bad request" in request_reply.answer(b"{}")
    assert b"bad request" in request_reply.answer(b'{"sensor": "s", "celsius": ' + b"9" * 400 + b"}")
    headers = [("correlation-id", b"c1"), ("reply-to", b"rpc.x")]
    assert request_reply.reply_headers(headers, ["rpc.replies", "rpc.x"]) == (
        "rpc.x", [("correlation-id", b"c1")], None)


def test_request_reply_refuses_a_reply_to_outside_its_reply_topics_and_answers_on_the_default():
    from kafka_patterns.jobs import request_reply

    topic, headers, error = request_reply.reply_headers([("correlation-id", b"c2"), ("reply-to", b"weather.readings")],
                                                        ["rpc.replies"])
    assert (topic, headers) == ("rpc.replies", [("correlation-id", b"c2")])
    assert "weather.readings" in error


def test_self_managed_offsets_fold_counts_per_sensor_and_next_offsets():
    from kafka_patterns.jobs import self_managed_offsets

    r = [Reading("r", "sensor-01", "s", i, 10.0 + i, 50.0, TS).to_json() for i in range(3)]
    t = "weather.readings"
    deltas, offsets, malformed = self_managed_offsets.fold([(t, 0, 5, r[0]), (t, 0, 6, r[1]), (t, 1, 9, b"bad"),
                                                            (t, 1, 10, r[2])])
    assert deltas == {"sensor-01": [3, 33.0, 2]}
    assert offsets == {("weather.readings", 0): 7, ("weather.readings", 1): 11}
    assert malformed == [(2, "not JSON")]


def test_replay_aggregate_counts_and_means_per_sensor():
    from kafka_patterns.jobs import replay

    rs = [Reading("r", s, "x", i, t, 50.0, TS) for i, (s, t) in enumerate([("a", 10.0), ("a", 20.0), ("b", -1.5)])]
    assert replay.aggregate(rs) == {"a": (2, 15.0), "b": (1, -1.5)}

"""make dlq: letters grouped by reason, with the jobs and source topics (pure part)."""

import pytest

from platform_cli import dlq


def letter(offset: int, reason: str | None, job: str = "content-filter", source: str = "weather.readings"):
    headers = {"job": job, "source.topic": source} | ({"reason": reason} if reason else {})
    return dlq.Letter(0, offset, b"k", b"v", headers)


def test_letters_are_grouped_by_reason_most_frequent_first():
    letters = [letter(0, "not JSON"), letter(1, "ts out of range", job="pipeline-clean"),
               letter(2, "not JSON", job="pipeline-clean"), letter(3, "not JSON"), letter(4, None)]
    groups = dlq.group(letters)
    assert [(g.reason, g.count) for g in groups] == [("not JSON", 3), ("(no reason header)", 1),
                                                     ("ts out of range", 1)]
    assert groups[0].jobs == {"content-filter": 2, "pipeline-clean": 1}
    text = dlq.table(groups)
    assert "not JSON" in text and "content-filter (2), pipeline-clean (1)" in text


def test_a_record_lettered_by_several_jobs_is_replayed_once():
    def sourced(offset, job, source_offset):
        return dlq.Letter(0, offset, b"k", b"v", {"reason": "not JSON", "job": job, "source.topic": "weather.readings",
                                                  "source.partition": "1", "source.offset": str(source_offset)})
    letters = [sourced(0, "fanout-logger", 7), sourced(1, "fanout-minmax", 7), sourced(2, "fanout-logger", 8),
               letter(3, "not JSON"), letter(4, "ts out of range")]
    chosen = dlq.to_replay(letters, "not JSON")
    assert [x.offset for x in chosen] == [0, 2, 3]


def test_the_dlq_user_may_write_every_input_of_a_dead_lettering_job_and_nothing_more():
    from kafka_patterns.config import acls, catalogue

    cat = catalogue.load()
    inputs = {t for j in cat["jobs"] if j.get("deadletter") for t in j["inputs"]}
    user = next(u for u in cat["users"] if u["name"] == dlq.USER)
    granted = acls.user_acls(user, cat["jobs"])
    assert {name for _, name, _, op in granted if op == "Write"} == inputs
    assert all(pattern == "literal" for _, _, pattern, _ in granted)
    # Derived, not listed: a new dead-lettering job needs no edit of the user.
    assert not {name for _, name, _, op in acls.listed_acls(user["acls"]) if op == "Write"}


def test_only_a_user_that_replays_dead_letters_gets_the_replay_acls():
    from kafka_patterns.config import acls

    jobs = [{"name": "a", "inputs": ["in.a", "in.b"], "deadletter": "dl"}, {"name": "b", "inputs": ["in.c"]}]
    listed = [{"resource": {"type": "topic", "name": "dl", "patternType": "literal"}, "operations": ["Read"]}]
    reader = {"name": "reader", "acls": listed}
    assert acls.user_acls(reader, jobs) == {("topic", "dl", "literal", "Read")}
    assert acls.user_acls(reader | {"replaysDeadLetters": True}, jobs) == {("topic", "dl", "literal", "Read")} | {
        ("topic", t, "literal", op) for t in ("in.a", "in.b") for op in ("Write", "Describe")}


def test_a_replayed_record_goes_back_with_its_own_headers_and_names_its_letter():
    tag = ("apicurio.value.globalId", b"\x00\x00\x00\x00\x00\x00\x00\x15")
    earlier = ("replayed.from", b"weather.deadletter/0/3")  # refused again after an earlier replay
    x = dlq.Letter(2, 41, b"k", b"v", {"reason": "does not match"}, (tag, earlier))
    assert dlq.replay_headers(x) == [tag, ("replayed.from", b"weather.deadletter/2/41")]


def test_a_truncated_letter_is_not_replayed_and_the_refusal_names_its_source_offset():
    whole = dlq.Letter(0, 1, b"k", b"v", {"reason": "larger than 4096 bytes", "source.topic": "weather.readings",
                                          "source.partition": "2", "source.offset": "40"})
    cut = dlq.Letter(0, 2, b"k", b"v" * 10, {**whole.headers, "source.offset": "41", "truncated": "true",
                                            "original.size": "2000000"})
    dlq.refuse_truncated([whole])
    with pytest.raises(SystemExit, match=r"1 of the 2 letters .* weather.readings/2/41 \(2000000 bytes\)"):
        dlq.refuse_truncated([whole, cut])

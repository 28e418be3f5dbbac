"""The bad-input suite's pure parts: the cases, which jobs must letter what, the verdict
on the letters, and the client jobs' letter headers."""

import hashlib
import json

from helpers import FakeMessage
from kafka_patterns.runtime import dead_letters, readings
from pattern_harness import bad_input
from platform_cli import dlq


def letter(job, topic, partition, offset, reason, value):
    headers = {"job": job, "reason": reason, "source.topic": topic, "source.partition": str(partition),
               "source.offset": str(offset)}
    return dlq.Letter(0, offset, None, value, headers)


def test_the_bad_cases_carry_the_run_and_include_the_three_poison_records():
    bad = {case: (value, reason) for case, value, reason in bad_input.bad_cases("run-7")}
    assert len(bad) >= 30
    assert {"NUL in sensor", "ts in year 0", "ts in year 100000"} <= set(bad)
    assert b'"run": "run-7"' in bad["temperature too hot"][0]


def test_every_reader_of_a_readings_topic_must_letter_it_and_only_those():
    assert bad_input.expected_jobs(["fanout-logger", "fanout-minmax", "exactly-once-copier"],
                                   "weather.readings") == ["fanout-logger", "fanout-minmax"]
    assert bad_input.expected_jobs(["pipeline-clean", "pipeline-enrich"], "weather.readings") == ["pipeline-clean"]
    assert bad_input.lettering_readers(["cdc-transform", "one-to-one"]) == ["one-to-one"]


def test_only_the_sinks_that_store_each_reading_once_must_letter_a_conflicting_version():
    jobs = ["fanout-logger", "fanout-minmax", "fanout-averager"]
    assert bad_input.expected_jobs(jobs, "weather.readings", deduplicating_only=True) == ["fanout-logger"]
    stored, conflicting = bad_input.conflicting_pair("run-7")
    identity = [{k: json.loads(v)[k] for k in ("run", "sensor", "seq")} for v in (stored, conflicting)]
    assert identity[0] == identity[1] and identity[0]["run"] != "run-7", "not the scenario's run"
    assert json.loads(stored) != json.loads(conflicting)
    assert [readings.parse(v)[1] for v in (stored, conflicting)] == [None, None]


def test_judge_finds_missing_letters_wrong_reasons_and_changed_values():
    injected = [bad_input.Injected("a", "weather.readings", 0, 10, b"{oops", "not JSON"),
                bad_input.Injected("b", "weather.readings", 1, 11, b"42", "not a JSON object"),
                bad_input.Injected("c", "weather.readings", 2, 12, b"[]", "not a JSON object")]
    letters = [letter("one-to-one", "weather.readings", 0, 10, "not JSON", b"{oops"),
               letter("one-to-one", "weather.readings", 0, 10, "not JSON", b"{oops"),  # sent twice: fine
               letter("one-to-one", "weather.readings", 1, 11, "not JSON", b"42"),
               letter("other-job", "weather.readings", 2, 12, "not a JSON object", b"[]")]
    (report,) = bad_input.judge(injected, ["one-to-one"], letters).values()
    assert (report.expected, report.lettered, report.missing) == (3, 2, ["c"])
    assert len(report.wrong_reason) == 1 and report.wrong_reason[0].startswith("b:")
    assert not report.ok


def test_a_client_jobs_letter_names_reason_source_and_job():
    class Msg(FakeMessage):
        def topic(self):
            return "work.queue"

    got = dict(dead_letters.headers(Msg(b"{", partition=4, offset=99), "not JSON", "work-queue"))
    assert got == {"reason": b"not JSON", "source.topic": b"work.queue", "source.partition": b"4",
                   "source.offset": b"99", "job": b"work-queue"}


def test_a_client_jobs_letter_carries_the_records_own_headers_first():
    class Msg(FakeMessage):
        def topic(self):
            return "weather.readings"

    own = [("apicurio.value.globalId", b"\x00\x00\x00\x00\x00\x00\x00\x15"), ("trace", None),
           ("reason", b"forged by the producer")]  # a letter's own header name is the letter's alone
    got = dead_letters.headers(Msg(b"{", headers=own), "not JSON", "fanout-logger")
    assert got[:2] == own[:2]
    assert [k for k, _ in got[2:]] == list(dead_letters.HEADERS) and dict(got)["reason"] == b"not JSON"


def test_a_record_lettered_again_carries_none_of_its_earlier_letters_headers():
    earlier = [("trace", b"t"), ("reason", b"conflicting duplicate"), (dead_letters.STORED_HEADER, b"{}"),
               ("truncated", b"true"), ("original.size", b"9")]
    assert dead_letters.carried(earlier) == [("trace", b"t")]


def test_a_letter_that_fits_is_the_record_and_its_headers_unchanged():
    own = [("reason", b"not JSON"), ("job", b"j")]
    letter = dead_letters.bounded(b"k", b"v" * 1000, [("trace", b"t")], own)
    assert letter == (b"k", b"v" * 1000, [("trace", b"t"), *own])


def test_a_letter_too_large_for_a_produce_request_keeps_a_prefix_the_size_and_the_digest():
    value = b"x" * 2_000_000  # a compressible value the broker took compressed
    own = [("reason", b"larger than 4096 bytes"), ("source.offset", b"7")]
    key, cut, headers = dead_letters.bounded(b"k" * 5000, value, [("trace", b"t")], own)
    assert (key, cut) == (b"k" * dead_letters.PREFIX_BYTES, value[:dead_letters.PREFIX_BYTES])
    got = dict(headers)
    assert got["truncated"] == b"true" and got["original.size"] == b"2000000"
    assert got["original.sha256"] == hashlib.sha256(value).hexdigest().encode()
    assert got["reason"] == b"larger than 4096 bytes" and got["trace"] == b"t"
    size = len(key) + len(cut) + sum(len(k) + len(v or b"") for k, v in headers)
    assert size <= dead_letters.LETTER_BUDGET


def test_a_letter_whose_record_headers_are_too_large_drops_them():
    own = [("reason", b"not JSON")]
    _, value, headers = dead_letters.bounded(None, b"{", [("big", b"h" * 1_000_000)], own)
    assert value == b"{" and [k for k, _ in headers] == ["reason", *dead_letters.TRUNCATION]

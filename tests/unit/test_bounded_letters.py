"""A dead letter always fits a produce request: the Spark jobs cut a letter as the client
jobs' deadletters.bounded does (a prefix, the original size and digest)."""

from __future__ import annotations

import hashlib

from pyspark.sql import functions as F

from kafka_patterns import deadletters
from kafka_patterns import spark as kp_spark

HUGE = b'{"run": "r1", "note": "' + b"x" * 2_000_000 + b'"}'  # compressible: the broker takes it compressed


def letters(kafka_records, values):
    parsed = kp_spark.parse_readings(kafka_records(values, keys=["k"] * len(values)))
    return {r.value[:20]: r for r in kp_spark.dead_letter_rows(parsed, "weather.deadletter", "one-to-one").collect()}


def test_a_spark_letter_too_large_for_a_produce_request_keeps_a_prefix_the_size_and_the_digest(kafka_records):
    rows = letters(kafka_records, [HUGE, b"{oops"])
    cut, small = rows[HUGE[:20]], rows[b"{oops"]
    assert bytes(cut.value) == HUGE[:deadletters.PREFIX_BYTES]
    headers = {h.key: bytes(h.value) for h in cut.headers}
    assert headers["truncated"] == b"true" and headers["original.size"] == str(len(HUGE)).encode()
    assert headers["original.sha256"] == hashlib.sha256(HUGE).hexdigest().encode()
    assert headers["reason"] == b"larger than 4096 bytes" and headers["job"] == b"one-to-one"
    assert bytes(small.value) == b"{oops" and "truncated" not in {h.key for h in small.headers}


def test_spark_and_the_client_jobs_cut_the_same_letter(kafka_records):
    (row,) = letters(kafka_records, [HUGE]).values()
    own = [(h.key, bytes(h.value)) for h in row.headers if h.key in deadletters.HEADERS]
    _, value, headers = deadletters.bounded(b"k", HUGE, [], own)
    assert (bytes(row.value), [(h.key, bytes(h.value)) for h in row.headers]) == (value, headers)


def test_a_routed_letter_is_cut_too(kafka_records):
    parsed = kp_spark.parse_readings(kafka_records([HUGE], keys=["k"]))
    (row,) = kp_spark.route_rows(parsed, [("weather.alerts.heat", F.lit(True), F.array())],
                                 "weather.deadletter", "content-filter").collect()
    assert row.topic == "weather.deadletter" and len(row.value) == deadletters.PREFIX_BYTES
    assert {h.key for h in row.headers} >= set(deadletters.TRUNCATION)

"""A dead letter always fits a produce request: the Spark jobs cut a letter as the client
jobs' deadletters.bounded does (a prefix, the original size and digest). A valid reading
carries the letter its sink sends when it cannot store it (a conflicting duplicate, a row
PostgreSQL refuses)."""

from __future__ import annotations

import hashlib
import json

from pyspark.sql import functions as F

from helpers import reading
from kafka_patterns.jobs import readings_to_postgres
from kafka_patterns.runtime import dead_letters
from kafka_patterns.runtime import spark as kp_spark

HUGE = b'{"run": "r1", "note": "' + b"x" * 2_000_000 + b'"}'  # compressible: the broker takes it compressed


def letters(kafka_records, values):
    parsed = kp_spark.parse_readings(kafka_records(values, keys=["k"] * len(values)))
    return {r.value[:20]: r for r in kp_spark.dead_letter_rows(parsed, "weather.deadletter", "one-to-one").collect()}


def test_a_spark_letter_too_large_for_a_produce_request_keeps_a_prefix_the_size_and_the_digest(kafka_records):
    rows = letters(kafka_records, [HUGE, b"{oops"])
    cut, small = rows[HUGE[:20]], rows[b"{oops"]
    assert bytes(cut.value) == HUGE[:dead_letters.PREFIX_BYTES]
    headers = {h.key: bytes(h.value) for h in cut.headers}
    assert headers["truncated"] == b"true" and headers["original.size"] == str(len(HUGE)).encode()
    assert headers["original.sha256"] == hashlib.sha256(HUGE).hexdigest().encode()
    assert headers["reason"] == b"larger than 4096 bytes" and headers["job"] == b"one-to-one"
    assert bytes(small.value) == b"{oops" and "truncated" not in {h.key for h in small.headers}


def test_spark_and_the_client_jobs_cut_the_same_letter(kafka_records):
    (row,) = letters(kafka_records, [HUGE]).values()
    own = [(h.key, bytes(h.value)) for h in row.headers if h.key in dead_letters.HEADERS]
    _, value, headers = dead_letters.bounded(b"k", HUGE, [], own)
    assert (bytes(row.value), [(h.key, bytes(h.value)) for h in row.headers]) == (value, headers)


def test_a_routed_letter_is_cut_too(kafka_records):
    parsed = kp_spark.parse_readings(kafka_records([HUGE], keys=["k"]))
    (row,) = kp_spark.route_rows(parsed, [("weather.alerts.heat", F.lit(True), F.array())],
                                 "weather.deadletter", "content-filter").collect()
    assert row.topic == "weather.deadletter" and len(row.value) == dead_letters.PREFIX_BYTES
    assert {h.key for h in row.headers} >= set(dead_letters.TRUNCATION)


def test_a_valid_reading_carries_the_letter_a_sink_sends_when_it_cannot_store_it(kafka_records):
    records = kafka_records([reading_bytes()], keys=["sensor-01"])
    parsed = kp_spark.parse_readings(records)
    (row,) = readings_to_postgres.to_rows(kp_spark.valid_with_sink_letters(parsed, "one-to-one")).collect()
    letter = row[kp_spark.SINK_LETTER]
    assert (letter.key, bytes(letter.value)) == ("sensor-01", reading_bytes())
    headers = dead_letters.with_reason([(h.key, bytes(h.value)) for h in letter.headers], "refused by t: why",
                                      (dead_letters.STORED_HEADER, b"{}"))
    assert dict(headers) == {"reason": b"refused by t: why", "source.topic": b"weather.readings",
                             "source.partition": b"0", "source.offset": b"0", "job": b"one-to-one",
                             dead_letters.STORED_HEADER: b"{}"}


def test_without_sink_letters_the_rows_are_the_sinks_columns_only(kafka_records):
    parsed = kp_spark.parse_readings(kafka_records([reading_bytes()]))
    assert tuple(readings_to_postgres.to_rows(kp_spark.valid_only(parsed)).columns) == readings_to_postgres.COLUMNS


def reading_bytes() -> bytes:
    return json.dumps(reading(1, ts=1_767_225_600_000)).encode()

"""The reading contract, one table of cases for its three implementations: the client
jobs' parser (readings.parse), the Spark jobs' (spark.parse_readings) and the Kafka
Streams peers' (bench/streams, ReadingContract.java, which reads the contract's limits,
fields, kinds and ranges from readings.py: bench.streams_peer.rules) must give every
case the same verdict, with the same reason."""

import pytest

from bench import streams_peer
from kafka_patterns.runtime import readings
from kafka_patterns.runtime import spark as kp_spark
from pattern_harness import bad_input

CASES = bad_input.cases("r1")
IDS = [c[0] for c in CASES]


def test_the_table_covers_at_least_30_kinds_of_bad_record():
    assert sum(1 for _, _, reason in CASES if reason) >= 30


@pytest.mark.parametrize("case,value,reason", CASES, ids=IDS)
def test_client_parser(case, value, reason):
    reading, error = readings.parse(value)
    assert error == reason
    assert (reading is None) == (reason is not None)


def test_spark_parser_gives_every_case_the_same_verdict_and_reason(kafka_records):
    rows = kp_spark.parse_readings(kafka_records([v for _, v, _ in CASES])).orderBy("offset").collect()
    got = {case: row.error for (case, _, _), row in zip(CASES, rows, strict=True)}
    assert got == {case: reason for case, _, reason in CASES}
    first = rows[0]  # "valid": its fields typed as the jobs use them
    assert (first.sensor, first.seq, first.temperature, first.ts) == ("sensor-01", 7, 21.5, 1_767_225_600_000)


def test_spark_parser_reads_each_field_of_a_record_at_most_twice(kafka_records):
    # Its type and its typed value, in a projection the checks read as columns: inlined
    # into the checks' CASE WHEN, the same variant_get ran up to six times per field.
    parsed = kp_spark.parse_readings(kafka_records([v for _, v, _ in CASES]))
    plan = parsed._jdf.queryExecution().executedPlan().toString()
    assert 0 < plan.count("variant_get(") <= 2 * len(readings.FIELDS)


def test_streams_peer_gives_every_case_the_same_verdict_and_reason():
    reasons = streams_peer.contract_reasons(v for _, v, _ in CASES)
    got = {case: reason for (case, _, _), reason in zip(CASES, reasons, strict=True)}
    assert got == {case: reason for case, _, reason in CASES}

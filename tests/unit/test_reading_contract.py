"""The reading contract, one table of cases for both of its implementations: the
client jobs' parser (readings.parse) and the Spark jobs' (spark.parse_readings) must
give every case the same verdict, with the same reason."""

import json

import pytest

from kafka_patterns import readings
from kafka_patterns import spark as kp_spark

GOOD = {"run": "r1", "sensor": "sensor-01", "station": "station-1", "seq": 7, "temperature": 21.5,
        "humidity": 40.0, "ts": 1_767_225_600_000}


def with_(**changes) -> bytes:
    """GOOD with fields changed (None: left out)."""
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None}).encode()


def raw_with(field: str, json_text: str) -> bytes:
    """GOOD with one field's JSON text replaced verbatim."""
    data = dict(GOOD)
    data[field] = "@@"
    return json.dumps(data).replace('"@@"', json_text).encode()


# (case, value, reason or None for a valid reading)
CASES = [
    ("valid", with_(), None),
    ("valid at the ranges' edges", with_(temperature=-60, humidity=100, seq=0, ts=946_684_800_000), None),
    ("valid with an extra field", with_(note="kept"), None),
    ("valid with integral temperature", with_(temperature=21), None),
    ("valid 64-character sensor", with_(sensor="s" * 64), None),
    ("valid non-ASCII station", with_(station="Zürich-1 ☀"), None),
    ("empty value", None, "empty value"),
    ("too large", with_(note="x" * 5000), "larger than 4096 bytes"),
    ("invalid UTF-8", with_(sensor="sensor-01").replace(b"sensor-01", b"sensor-\xff\xfe"), "not UTF-8"),
    ("truncated JSON", b'{"run": "r1", "sensor"', "not JSON"),
    ("not JSON at all", b"{oops", "not JSON"),
    ("empty bytes", b"", "not JSON"),
    ("NaN temperature", raw_with("temperature", "NaN"), "not JSON"),
    ("duplicate key", with_()[:-1] + b', "seq": 8}', "not JSON"),
    ("a string", b'"just a string"', "not a JSON object"),
    ("an array", b"[1, 2]", "not a JSON object"),
    ("a number", b"42", "not a JSON object"),
    ("missing run", with_(run=None), "missing run"),
    ("missing seq and ts", with_(seq=None, ts=None), "missing seq,ts"),
    ("null humidity", raw_with("humidity", "null"), "missing humidity"),
    ("empty object", b"{}", "missing run,sensor,station,seq,temperature,humidity,ts"),
    ("temperature as a string", with_(temperature="21.5"), "temperature is not a number"),
    ("humidity as a boolean", with_(humidity=True), "humidity is not a number"),
    ("fractional seq", with_(seq=100005.7), "seq is not an integer"),
    ("integral float seq", raw_with("seq", "7.0"), "seq is not an integer"),
    ("ts in exponent notation", raw_with("ts", "1e20"), "ts is not an integer"),
    ("sensor as a number", with_(sensor=7), "sensor is not a string"),
    ("station as an object", with_(station={"id": 1}), "station is not a string"),
    ("empty sensor", with_(sensor=""), "sensor is empty or longer than 64 characters"),
    ("65-character run", with_(run="r" * 65), "run is empty or longer than 64 characters"),
    ("NUL in sensor", with_(sensor="sensor-\u000001"), "sensor has a control character"),
    ("newline in station", with_(station="station\n1"), "station has a control character"),
    ("negative seq", with_(seq=-1), "seq out of range"),
    ("seq beyond 64 bits", raw_with("seq", str(2**64)), "seq is not an integer"),
    ("temperature as a huge integer", raw_with("temperature", str(10**30)), "temperature out of range"),
    ("temperature too hot", with_(temperature=999), "temperature out of range"),
    ("humidity below 0", with_(humidity=-0.1), "humidity out of range"),
    ("ts in year 3000", with_(ts=32_503_680_000_000), "ts out of range"),
    ("negative ts", with_(ts=-1), "ts out of range"),
    ("ts in year 0", with_(ts=-62_167_219_200_000), "ts out of range"),
    ("ts in year 100000", with_(ts=3_093_527_980_800_000), "ts out of range"),
    ("ts of 1970", with_(ts=1000), "ts out of range"),
]
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

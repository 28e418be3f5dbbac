"""Reading parsing: the plain-Python parser and the Spark one agree on what is malformed."""

import pytest

from helpers import reading
from kafka_patterns.runtime import readings
from kafka_patterns.runtime import spark as kp_spark

MALFORMED = {
    b"{not json": "not JSON",
    b'"just a string"': "not a JSON object",
    b'{"sensor": "sensor-00", "seq": 3}': "missing run",
    b'{"run":"r","sensor":"s","station":"t","seq":1,"temperature":999,"humidity":1,"ts":1}': "temperature",
}


def test_valid_reading_round_trips():
    reading = readings.Reading("r1", "sensor-01", "station-1", 7, 21.5, 40.0, 1_767_225_600_000)
    r, err = readings.parse(reading.to_json())
    assert err is None and r.record_id == ("sensor-01", 7)


@pytest.mark.parametrize("raw,reason", MALFORMED.items())
def test_malformed_values_name_the_reason(raw, reason):
    r, err = readings.parse(raw)
    assert r is None and reason in err


def test_spark_parser_flags_exactly_the_malformed_records(kafka_records):
    df = kp_spark.parse_readings(kafka_records([reading(1), *MALFORMED, reading(2)]))
    rows = df.orderBy("offset").collect()
    assert [r.error is None for r in rows] == [True, False, False, False, False, True]
    assert rows[0].seq == 1 and rows[0].sensor == "sensor-01" and rows[0].partition == 0
    assert "missing" in rows[3].error and "temperature" in rows[4].error

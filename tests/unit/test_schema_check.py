"""A consumer's check of a record's schema tag (kafka_patterns.runtime.schema_check), with the
registry stood in by a dict: an untagged reading passes on the contract alone; a tagged
one must name a registered version of the topic's schema and match it, newer versions
included; every refusal has a reason for its dead letter."""

import json

import pytest

from kafka_patterns.config import schemas
from kafka_patterns.runtime import readings
from kafka_patterns.runtime.schema_check import SchemaCheck, UnknownId, Version

HEADER = "apicurio.value.contentId"
V1, V2 = schemas.declared()["reading"].versions[:2]
REGISTRY = {1: Version("reading", 1, V1), 2: Version("reading", 2, V2), 7: Version("sensor-state", 1, {})}


def resolve(schema_id: int) -> Version:
    try:
        return REGISTRY[schema_id]
    except KeyError:
        raise UnknownId(schema_id) from None


def decode(raw: bytes) -> int:
    if len(raw) != 8:
        raise ValueError("not 8 bytes")
    return int.from_bytes(raw, "big")


CHECK = SchemaCheck("reading", HEADER, resolve, decode)
READING = {"run": "r1", "sensor": "sensor-01", "station": "station-1", "seq": 7, "temperature": 21.5,
           "humidity": 40.0, "ts": 1_767_225_600_000}


def tagged(schema_id: int) -> list[tuple[str, bytes]]:
    return [("trace", b"x"), (HEADER, schema_id.to_bytes(8, "big"))]


class Record:
    def __init__(self, value: dict, headers=None):
        self._value, self._headers = json.dumps(value).encode(), headers

    def value(self):
        return self._value

    def headers(self):
        return self._headers


def test_an_untagged_reading_is_judged_by_the_contract_alone():
    assert CHECK.reason(None, READING) is None
    assert CHECK.reason([("trace", b"x")], READING) is None


def test_a_reading_of_a_newer_compatible_version_is_read_by_the_schema_its_tag_names():
    assert CHECK.reason(tagged(2), READING | {"pressure": 1013.0}) is None
    assert CHECK.reason(tagged(2), READING) is None  # the field is optional


REFUSED = {
    "a malformed id header": ([(HEADER, b"\x01")], READING, "schema id header apicurio.value.contentId is not an id"),
    "an id the registry does not know": (tagged(99), READING, "schema id 99 is not in the registry"),
    "an id of another schema": (tagged(7), READING, "schema id 7 is sensor-state v1, not reading"),
    "a value its version refuses": (tagged(2), READING | {"pressure": 5.0},
                                    "does not match reading v2 at pressure: 5.0 is less than the minimum of 870"),
    "a field its version does not have": (tagged(1), READING | {"pressure": 1013.0},
                                          "does not match reading v1 at the record: Additional properties are not "
                                          "allowed ('pressure' was unexpected)"),
}


@pytest.mark.parametrize("headers,value,reason", REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_record_has_its_reason(headers, value, reason):
    assert CHECK.reason(headers, value) == reason


def test_split_sends_a_record_its_schema_refuses_to_the_dead_letters_with_the_reason():
    good = Record(READING, tagged(1))
    refused = Record(READING | {"pressure": 5.0}, tagged(2))
    untagged = Record(READING | {"seq": 8})
    ok, bad = readings.split([good, refused, untagged], CHECK)
    assert [m for m, _ in ok] == [good, untagged]
    assert bad == [(refused, REFUSED["a value its version refuses"][2])]
    ok, bad = readings.split([good, refused, untagged])  # no check: the contract alone
    assert len(ok) == 3 and bad == []

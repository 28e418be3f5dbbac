"""The Spark jobs' check of a record's schema tag (spark.parse_readings with
kafka_patterns.runtime.schema_tags), with the registry's ids stood in by a fixed map: it refuses
what the client jobs' check (schema_check) refuses, with the same reasons, and with no
registry configured it checks no tag at all."""

import pytest

from helpers import reading
from kafka_patterns.clients.registry import VALUE_ID_HEADER, decode_id, encode_id
from kafka_patterns.config import schemas
from kafka_patterns.runtime import schema_tags
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime.schema_check import SchemaCheck, UnknownId, Version

V1, V2 = schemas.declared()["reading"].versions[:2]
REGISTRY = {11: Version("reading", 1, V1), 12: Version("reading", 2, V2), 21: Version("sensor-state", 1, {})}
KNOWN = schema_tags.KnownIds(
    topics={"weather.readings": "reading"},  # smoke.records carries no schema
    versions={i: [(v.name, v.version)] for i, v in REGISTRY.items()},
    properties={11: sorted(V1["properties"]), 12: sorted(V2["properties"])})


def tag(schema_id: int) -> list[tuple[str, bytes]]:
    return [("trace", b"x"), (VALUE_ID_HEADER, encode_id(schema_id))]


CASES = [  # (value, headers); the reason is the client check's
    (reading(1), None),
    (reading(2), [("trace", b"x")]),
    (reading(3), tag(11)),
    (reading(4, pressure=1013.25), tag(12)),  # the newer version, its new field
    (reading(5), tag(12)),  # which is optional
    (reading(6, pressure=1013.25), tag(11)),  # v1 is closed
    (reading(7, pressure=1013.25, wind=3.0), tag(11)),
    (reading(8), [(VALUE_ID_HEADER, b"\x00\x01")]),
    (reading(9), tag(21)),
    (reading(10), tag(-1)),
    (reading(11), tag(2**40)),
]


def resolve(schema_id: int) -> Version:
    if schema_id not in REGISTRY:
        raise UnknownId(schema_id)
    return REGISTRY[schema_id]


@pytest.fixture
def tagged_records(spark, kafka_records):
    """kafka_records with a `headers` column as the Kafka source gives it."""
    def make(cases, topic="weather.readings"):
        headers = spark.createDataFrame([(i, h) for i, (_, h) in enumerate(cases)],
                                        "offset long, headers array<struct<key:string,value:binary>>")
        return kafka_records([v for v, _ in cases], topic=topic).join(headers, "offset")
    return make


def errors(parsed) -> list[str | None]:
    return [r.error for r in parsed.orderBy("offset").collect()]


def test_tags_are_refused_with_the_client_checks_reasons(tagged_records, monkeypatch):
    monkeypatch.setattr(schema_tags, "known_ids", lambda: KNOWN)
    check = SchemaCheck("reading", VALUE_ID_HEADER, resolve, decode_id)
    want = [check.reason(h, v) for v, h in CASES]
    assert want[:5] == [None] * 5 and all(want[5:])
    # An id the job does not know may have been registered after it resolved the ids.
    want = [f"{r} (as of this job's start)" if r and r.endswith("not in the registry") else r for r in want]
    assert errors(kp_spark.parse_readings(tagged_records(CASES))) == want


def test_the_contract_comes_first_and_topics_without_a_schema_are_not_checked(tagged_records, monkeypatch):
    monkeypatch.setattr(schema_tags, "known_ids", lambda: KNOWN)
    assert errors(kp_spark.parse_readings(tagged_records([(b"{oops", tag(21))]))) == ["not JSON"]
    assert errors(kp_spark.parse_readings(tagged_records([(reading(1), tag(21))], topic="smoke.records"))) == [None]


def test_without_a_registry_no_tag_is_checked(tagged_records, kafka_records, monkeypatch):
    monkeypatch.setattr(schema_tags, "known_ids", lambda: None)
    parsed = kp_spark.parse_readings(tagged_records([(reading(1), tag(21)), (b"{oops", tag(11))]))
    assert errors(parsed) == [None, "not JSON"]
    assert parsed.columns == kp_spark.parse_readings(kafka_records([reading(1)])).columns


def test_a_refused_records_letter_carries_its_tag_so_a_replay_is_held_to_it_again(tagged_records, monkeypatch):
    monkeypatch.setattr(schema_tags, "known_ids", lambda: KNOWN)
    from kafka_patterns.runtime import dead_letters

    parsed = kp_spark.parse_readings(tagged_records([(reading(1), tag(11)), (reading(2, pressure=1.0), tag(11)),
                                                     (b"{oops", None)]))
    letters = kp_spark.dead_letter_rows(parsed, "weather.deadletter", "pipeline-clean").orderBy("value").collect()
    headers = [[(h.key, bytes(h.value)) for h in row.headers] for row in letters]
    assert [[k for k, _ in h] for h in headers] == [["trace", VALUE_ID_HEADER, *dead_letters.HEADERS],
                                                    list(dead_letters.HEADERS)]
    assert headers[0][:2] == tag(11)
    assert kp_spark.valid_only(parsed).columns == kp_spark.valid_only(
        kp_spark.parse_readings(tagged_records([(reading(1), None)]))).columns


class FakeRegistry:
    group = "kafka-patterns"

    def __init__(self, versions: list[tuple[str, int, int]]):
        self.versions, self.asked = versions, []

    def call(self, method, path):
        offset, limit = (int(p.split("=")[1]) for p in path.split("&")[1:])
        page = self.versions[offset:offset + limit]
        return 200, {"versions": [{"artifactId": a, "version": str(v), "contentId": i} for a, v, i in page]}

    def schema_by_id(self, schema_id):
        self.asked.append(schema_id)
        return {11: V1, 12: V2}.get(schema_id, {"properties": {"count": {}}})  # 21: open


def test_the_driver_resolves_every_version_and_the_properties_of_the_topics_schemas():
    reg = FakeRegistry([("reading", 2, 12), ("sensor-state", 1, 21), ("reading", 1, 11), ("other", 1, 11),
                        *[(f"filler-{n}", 1, 100 + n) for n in range(600)]])  # more than one page
    known = schema_tags.resolve(reg, {"weather.readings": "reading", "changelog.sensor-state": "sensor-state"})
    assert known.versions[11] == [("other", 1), ("reading", 1)] and known.versions[12] == [("reading", 2)]
    assert len(known.versions) == 603
    assert known.properties == {11: sorted(V1["properties"]), 12: sorted(V2["properties"])}
    assert sorted(reg.asked) == [11, 12, 21]  # the schemas of the topics only

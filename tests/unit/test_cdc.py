"""CDC: the Debezium-envelope transformation (in-memory DataFrames) and the connector
configs registered with Kafka Connect."""

import json

from kafka_patterns.clients import connect
from kafka_patterns.config import inventory
from kafka_patterns.jobs import cdc_transform as cdc


def row(i, name="north field", elevation=100.0, run="r1"):
    return {"id": i, "run": run, "name": name, "latitude": 51.5, "longitude": -0.1, "elevation_m": elevation}


def event(op, before=None, after=None):
    return {"before": before, "after": after, "op": op, "source": {"table": "stations"}, "ts_ms": 1}


def transformed(spark, kafka_records, values):
    out = cdc.transform(cdc.parse_events(kafka_records(values, topic="cdc.public.stations",
                                                       keys=["k"] * len(values)))).collect()
    return [(json.loads(r.key), None if r.value is None else json.loads(r.value)) for r in out]


def test_create_and_update_become_schemad_upserts_with_converted_fields(spark, kafka_records):
    (key, value), (_, updated) = transformed(spark, kafka_records, [
        event("c", after=row(1)), event("u", before=row(1), after=row(1, name="south", elevation=10.0))])
    assert key == {"schema": cdc.KEY_SCHEMA, "payload": {"id": 1}}
    assert value["schema"] == cdc.VALUE_SCHEMA
    assert value["payload"] == {"id": 1, "run": "r1", "name": "NORTH FIELD", "latitude": 51.5, "longitude": -0.1,
                                "elevation_ft": 328.08}
    assert updated["payload"]["name"] == "SOUTH" and updated["payload"]["elevation_ft"] == 32.81


def test_snapshot_reads_are_upserts_too(spark, kafka_records):
    ((_, value),) = transformed(spark, kafka_records, [event("r", after=row(7))])
    assert value["payload"]["id"] == 7


def test_a_delete_becomes_a_tombstone_with_the_key(spark, kafka_records):
    ((key, value),) = transformed(spark, kafka_records, [event("d", before=row(3))])
    assert key["payload"] == {"id": 3}
    assert value is None


def test_debezium_tombstones_and_foreign_values_are_dropped(spark, kafka_records):
    assert transformed(spark, kafka_records, [b"", "not json", {"op": "x"}]) == []


def test_values_that_are_not_change_events_are_dead_lettered_with_a_reason(spark, kafka_records):
    from kafka_patterns.runtime import spark as kp_spark

    values = [event("c", after=row(1)), "not json", {"op": "x"}, event("u", after={"name": "no id"}), b""]
    parsed = cdc.parse_events(kafka_records(values, topic="cdc.public.stations", keys=["k"] * len(values)))
    letters = kp_spark.dead_letter_rows(parsed, "dead.t", "cdc-transform").collect()
    got = [({h.key: bytes(h.value).decode() for h in r.headers}) for r in letters]
    assert [(h["reason"], h["source.offset"]) for h in got] == [
        ("not a change event", "1"), ("not a change event", "2"), ("change event without a row id", "3"),
        ("not a change event", "4")]
    assert {h["job"] for h in got} == {"cdc-transform"}


def test_expected_row_applies_the_same_rule():
    assert cdc.expected_row("north field", 51.5, -0.1, 100.0) == ("NORTH FIELD", 51.5, -0.1, 328.08)
    assert cdc.expected_row("x", None, None, None) == ("X", None, None, None)


def test_connector_configs_take_the_connection_from_the_inventory():
    cluster = inventory.Cluster((), ("http://c:8083",), "db.host", 5433, "patterns", "app", "app-pw", None,
                                "repl", "repl-pw")
    source = connect.connector_config(connect.specs()["stations-source"], cluster, secrets_file="/s/c.properties")
    assert source["connector.class"] == "io.debezium.connector.postgresql.PostgresConnector"
    assert (source["database.hostname"], source["database.port"], source["database.user"],
            source["database.password"]) == ("db.host", "5433", "repl",
                                             "${file:/s/c.properties:postgresql.replication.password}")
    assert source["table.include.list"] == "public.stations"
    sink = connect.connector_config(connect.specs()["stations-sink"], cluster, secrets_file="/s/c.properties")
    assert sink["connection.url"] == "jdbc:postgresql://db.host:5433/patterns"
    assert (sink["connection.username"], sink["connection.password"]) == (
        "app", "${file:/s/c.properties:postgresql.app.password}")
    # The passwords themselves never go into a connector config.
    assert not [v for v in {**source, **sink}.values() if "pw" in v.split(":")[-1] and "$" not in v]
    assert sink["value.converter.schemas.enable"] == "true"
    assert all(isinstance(v, str) for v in {**source, **sink}.values())


def test_running_needs_every_task_running_and_raises_on_failure():
    import pytest

    ok = {"name": "s", "connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]}
    assert connect.running(ok)
    assert not connect.running({**ok, "tasks": []})
    assert not connect.running(None)
    with pytest.raises(RuntimeError, match="FAILED: boom"):
        connect.running({**ok, "tasks": [{"id": 0, "state": "FAILED", "trace": "boom"}]})

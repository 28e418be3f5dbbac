"""CDC through Kafka Connect: Debezium's PostgresConnector (catalogue connector
stations-source) captures every row change of public.stations into
cdc.public.stations; this Spark job transforms the change events into
cdc.stations.transformed; the Debezium JDBC sink (stations-sink) upserts them into
stations_replica.

Transformation (pure, `transform`): a create/update/snapshot-read event becomes the
row's new state with the name upper-cased and the elevation converted from metres to
feet, written as a schema'd JSON envelope ({"schema": ..., "payload": ...}) keyed by
{"id": ...} with its schema too (the JDBC sink derives columns and the primary key from
the schemas); a delete event becomes a tombstone (the key, a null value), which the sink
turns into a DELETE. Debezium's own tombstones (null values) are dropped; a value that
is not a change event goes to the dead-letter topic with the reason.

Guarantee: at-least-once into Kafka (the Kafka sink of Spark may rewrite a batch after
a crash) made idempotent end to end by the sink's upsert/delete on the primary key;
per-key order (one key, one partition, all the way).

    python -m kafka_patterns.jobs.cdc_transform --job cdc-transform [--available-now]
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark

FEET_PER_METRE = 3.28084
# A row of the captured table, public.stations (ansible/roles/postgresql creates it with
# the database, before any connector; Debezium reads its changes).
ROW = T.StructType([T.StructField("id", T.LongType()), T.StructField("run", T.StringType()),
                    T.StructField("name", T.StringType()), T.StructField("latitude", T.DoubleType()),
                    T.StructField("longitude", T.DoubleType()), T.StructField("elevation_m", T.DoubleType())])
EVENT = T.StructType([T.StructField("before", ROW), T.StructField("after", ROW), T.StructField("op", T.StringType())])

# Connect schemas of what this job writes (JsonConverter with schemas.enable=true).
KEY_SCHEMA = {"type": "struct", "name": "stations_replica.Key", "optional": False,
              "fields": [{"field": "id", "type": "int64", "optional": False}]}
VALUE_SCHEMA = {"type": "struct", "name": "stations_replica.Value", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "run", "type": "string", "optional": False},
    {"field": "name", "type": "string", "optional": False},
    {"field": "latitude", "type": "double", "optional": True},
    {"field": "longitude", "type": "double", "optional": True},
    {"field": "elevation_ft", "type": "double", "optional": True}]}


def envelope(schema: dict, payload: Column) -> Column:
    """{"schema": <schema>, "payload": <payload as JSON>} as a string column."""
    return F.concat(F.lit('{"schema":' + json.dumps(schema, separators=(",", ":")) + ',"payload":'),
                    F.to_json(payload), F.lit("}"))


def _row() -> Column:
    """The row a change event is about: the old state for a delete, else the new one."""
    return F.when(F.col("e.op") == "d", F.col("e.before")).otherwise(F.col("e.after"))


def parse_events(records: DataFrame) -> DataFrame:
    """Kafka records -> the change event `e`, the record's key, `raw` value bytes and
    source, and `error` naming why a record is not a change event this job can apply
    (null for a change event, and for Debezium's tombstones, which are no events)."""
    event = F.from_json(F.col("value").cast("string"), EVENT).alias("e")
    parsed = records.select(F.col("key").cast("string").alias("key"), F.col("value").alias("raw"),
                            "topic", "partition", "offset", event)
    error = (F.when(F.col("raw").isNull(), F.lit(None))
             .when(~F.coalesce(F.col("e.op").isin("c", "u", "r", "d"), F.lit(False)), F.lit("not a change event"))
             .when(_row().getField("id").isNull(), F.lit("change event without a row id")))
    return parsed.select("*", error.alias("error"))


def transform(parsed: DataFrame) -> DataFrame:
    """Parsed change events (parse_events) -> (key, value) records for the JDBC sink;
    value is null (a tombstone) for a delete. Tombstones and bad records give nothing."""
    events = parsed.where(F.col("raw").isNotNull() & F.col("error").isNull())
    row = _row()
    new = F.struct(F.col("e.after.id").alias("id"), F.col("e.after.run").alias("run"),
                   F.upper(F.col("e.after.name")).alias("name"), F.col("e.after.latitude").alias("latitude"),
                   F.col("e.after.longitude").alias("longitude"),
                   F.round(F.col("e.after.elevation_m") * FEET_PER_METRE, 2).alias("elevation_ft"))
    return events.select(
        envelope(KEY_SCHEMA, F.struct(row.getField("id").alias("id"))).alias("key"),
        F.when(F.col("e.op") == "d", F.lit(None).cast("string")).otherwise(envelope(VALUE_SCHEMA, new)).alias("value"))


def expected_row(name: str, latitude: float | None, longitude: float | None,
                 elevation_m: float | None) -> tuple:
    """What the replica should hold for a source row (same rule as transform)."""
    return (name.upper(), latitude, longitude, None if elevation_m is None else round(elevation_m * FEET_PER_METRE, 2))


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = base.parser(job, __doc__).parse_args(argv)
    session = spark.session(job.name)
    records = spark.read_stream(session, list(job.inputs), args.starting_offsets, **base.source_options(args))
    (out,) = job.output_topics
    parsed = parse_events(records)
    writer = (transform(parsed).writeStream.format("kafka").options(**spark.kafka_sink_options())
              .option("topic", out))
    base.await_all([base.start_dead_letters(parsed, job, args),
                    base.start(writer, job, args, stateless_kafka_sink=True)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Readings -> PostgreSQL, the job shape of one-to-one, total order, the fan-out logger
and the delivery-semantics jobs: the job's input topic, valid readings (bad records
to its dead letters), and a foreachBatch sink into its table, whose columns are the
reading's plus the record's partition and offset."""

from __future__ import annotations

import psycopg
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns import pg, spark
from kafka_patterns.jobs import base

COLUMNS = ("run", "sensor", "station", "seq", "temperature", "humidity", "event_time",
           "kafka_partition", "kafka_offset")
DDL = """CREATE TABLE IF NOT EXISTS {table} (
    id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, station TEXT, seq BIGINT,
    temperature DOUBLE PRECISION, humidity DOUBLE PRECISION, event_time TIMESTAMPTZ,
    kafka_partition INT, kafka_offset BIGINT)"""


def to_rows(readings: DataFrame) -> DataFrame:
    """Parsed readings -> sink rows (pure: no I/O)."""
    return readings.select("run", "sensor", "station", "seq", "temperature", "humidity",
                           spark.event_time(F.col("ts")).alias("event_time"),
                           F.col("partition").alias("kafka_partition"), F.col("offset").alias("kafka_offset"))


READING_KEY = ("run", "sensor", "seq")


def ensure_table(table: str, unique_readings: bool = False) -> None:
    """The sink table (same columns as `readings`), the batch ledger and, for a job that
    stores each reading once, the unique index on READING_KEY."""
    ddl = [pg.LEDGER_DDL, DDL.format(table=table)]
    if unique_readings:
        ddl.append(f"CREATE UNIQUE INDEX IF NOT EXISTS {table}_reading ON {table} ({', '.join(READING_KEY)})")
    try:
        pg.ensure(*ddl)
    except psycopg.errors.UniqueViolation as e:
        raise SystemExit(f"{table} already holds the same reading twice, so its unique index on "
                         f"({', '.join(READING_KEY)}) cannot be built; delete the older copies, e.g. DELETE FROM "
                         f"{table} a USING {table} b WHERE a.id > b.id AND (a.run, a.sensor, a.seq) = "
                         f"(b.run, b.sensor, b.seq)") from e


def run_to_postgres(job: str, argv: list[str] | None, doc: str | None, exactly_once: bool = True,
                    unique_readings: bool | None = None) -> int:
    """A readings -> PostgreSQL job (this one and the delivery-semantics jobs): the job's
    input topic, its table (same columns as `readings`). exactly_once: with the batch
    ledger, else at-least-once (duplicates kept and counted). unique_readings (default:
    as exactly_once): each reading stored once, whatever the records."""
    args = base.parser(job, doc).parse_args(argv)
    table = base.output_table(job)
    unique_readings = exactly_once if unique_readings is None else unique_readings
    ensure_table(table, unique_readings)
    session = spark.session(job)
    records = spark.read_stream(session, base.input_topics(job), args.starting_offsets, **base.source_options(args))
    sink = base.postgres_batch_sink(base.checkpoint_dir(job, args), table, COLUMNS, exactly_once=exactly_once,
                                    unique=READING_KEY if unique_readings else ())
    readings, letters = base.valid_readings(records, job, args)
    base.await_all([letters, base.start(to_rows(readings).writeStream.foreachBatch(sink), job, args)])
    return 0

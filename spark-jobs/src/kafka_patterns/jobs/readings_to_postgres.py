"""Readings -> PostgreSQL: the job's input topic, valid readings (bad records to its
dead letters), and a foreachBatch sink into its table, whose columns are the reading's
plus the record's partition and offset. The catalogue jobs it runs differ in their
`args`:

- one-to-one, total-order (a 1-partition topic: one global order, kept in offset
  order), fanout-logger (one of three subscribers of the same readings): the defaults,
  exactly once per record (batch ledger) and once per reading (--unique-readings: the
  same run, sensor and seq produced twice is stored once, the duplicate counted in the log).
- at-least-once: --sink at-least-once, the plain foreachBatch. Spark records a batch in
  its checkpoint only after the write, so a job killed between the two replays the
  batch: nothing lost, duplicates possible and counted.
- exactly-once: the batch ledger (rows and batch id in ONE PostgreSQL transaction, a
  batch id already committed skipped, so a replay after a crash is a no-op) and no
  unique key (--no-unique-readings), so that its fault test proves the ledger alone.

    python -m kafka_patterns.jobs.readings_to_postgres --job NAME [--available-now]
"""

from __future__ import annotations

import argparse
import sys

import psycopg
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark

COLUMNS = ("run", "sensor", "station", "seq", "temperature", "humidity", "event_time",
           "kafka_partition", "kafka_offset")
DDL = """CREATE TABLE IF NOT EXISTS {table} (
    id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, station TEXT, seq BIGINT,
    temperature DOUBLE PRECISION, humidity DOUBLE PRECISION, event_time TIMESTAMPTZ,
    kafka_partition INT, kafka_offset BIGINT)"""
SINKS = ("exactly-once", "at-least-once")


def to_rows(readings: DataFrame) -> DataFrame:
    """Parsed readings -> sink rows, with their letters where they have them (the sink's
    for a reading it cannot store: spark.SINK_LETTER) (pure: no I/O)."""
    letter = [spark.SINK_LETTER] if spark.SINK_LETTER in readings.columns else []
    return readings.select("run", "sensor", "station", "seq", "temperature", "humidity",
                           spark.event_time(F.col("ts")).alias("event_time"),
                           F.col("partition").alias("kafka_partition"), F.col("offset").alias("kafka_offset"), *letter)


READING_KEY = ("run", "sensor", "seq")


def ensure_table(table: str, unique_readings: bool = False) -> None:
    """The sink table (same columns as `readings`), the batch ledger and, for a job that
    stores each reading once, the unique index on READING_KEY."""
    ddl = [postgres.LEDGER_DDL, DDL.format(table=table)]
    if unique_readings:
        ddl.append(f"CREATE UNIQUE INDEX IF NOT EXISTS {table}_reading ON {table} ({', '.join(READING_KEY)})")
    try:
        postgres.ensure(*ddl)
    except psycopg.errors.UniqueViolation as e:
        raise SystemExit(f"{table} already holds the same reading twice, so its unique index on "
                         f"({', '.join(READING_KEY)}) cannot be built; delete the older copies, e.g. DELETE FROM "
                         f"{table} a USING {table} b WHERE a.id > b.id AND (a.run, a.sensor, a.seq) = "
                         f"(b.run, b.sensor, b.seq)") from e


def parser(job: catalogue.Job) -> base.JobParser:
    p = base.parser(job, __doc__)
    p.add_argument("--sink", choices=SINKS, default=SINKS[0],
                   help="exactly-once: rows and batch id in one transaction (the batch ledger); "
                        "at-least-once: the plain foreachBatch (default: %(default)s)")
    p.add_argument("--unique-readings", action=argparse.BooleanOptionalAction, default=True,
                   help="store each reading (run, sensor, seq) once, whatever the records (default: on)")
    return p


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = parser(job).parse_args(argv)
    ensure_table(job.table, args.unique_readings)
    base.readings_to_table(job, args, to_rows, COLUMNS, exactly_once=args.sink == "exactly-once",
                           unique=READING_KEY if args.unique_readings else ())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""one-to-one: one producer, one topic, one consumer job writing every reading to
PostgreSQL (table `readings`), exactly once per record (foreachBatch + batch ledger).

    python -m kafka_patterns.jobs.one_to_one [--available-now]
"""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns import pg, spark
from kafka_patterns.jobs import base

JOB = "one-to-one"
TABLE = base.output_table(JOB)
COLUMNS = ("run", "sensor", "station", "seq", "temperature", "humidity", "event_time",
           "kafka_partition", "kafka_offset")
DDL = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, station TEXT, seq BIGINT,
    temperature DOUBLE PRECISION, humidity DOUBLE PRECISION, event_time TIMESTAMPTZ,
    kafka_partition INT, kafka_offset BIGINT)"""


def to_rows(readings: DataFrame) -> DataFrame:
    """Parsed readings -> sink rows (pure: no I/O)."""
    return readings.select("run", "sensor", "station", "seq", "temperature", "humidity",
                           spark.event_time(F.col("ts")).alias("event_time"),
                           F.col("partition").alias("kafka_partition"), F.col("offset").alias("kafka_offset"))


def ensure_table(table: str) -> None:
    """The sink table (same columns as `readings`) and the batch ledger."""
    pg.ensure(pg.LEDGER_DDL, DDL.replace(f"EXISTS {TABLE} (", f"EXISTS {table} ("))


def run_to_postgres(job: str, argv: list[str] | None, doc: str | None, exactly_once: bool = True) -> int:
    """A readings -> PostgreSQL job (this one and the delivery-semantics jobs): the job's
    input topic, its table (same columns as `readings`), with or without the batch ledger."""
    args = base.parser(job, doc).parse_args(argv)
    table = base.output_table(job)
    ensure_table(table)
    session = spark.session(job)
    records = spark.read_stream(session, base.input_topics(job), args.starting_offsets, **base.source_options(args))
    sink = base.postgres_batch_sink(base.checkpoint_dir(job, args), table, COLUMNS, exactly_once=exactly_once)
    base.await_all([base.start(to_rows(spark.valid_readings(records)).writeStream.foreachBatch(sink), job, args)])
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_to_postgres(JOB, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())

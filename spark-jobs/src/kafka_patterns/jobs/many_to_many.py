"""many-to-many: several producers (one topic per station) and several independent
consumer groups; this job is one of the groups: it merges every station topic into
PostgreSQL (table `merged_readings`), each row tagged with the topic it came from.

    python -m kafka_patterns.jobs.many_to_many --job many-to-many [--available-now]

Guarantee: every record of every producer reaches every group (each group has its
own offsets: Spark's checkpoint here, committed group offsets for the client
groups of the scenario); here exactly once per record (foreachBatch + batch ledger)
and in order per (source topic, sensor), since a key stays in one partition.
Malformed readings are dropped (the pipeline's clean stage dead-letters them).
"""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns.clients import postgres
from kafka_patterns.jobs import base
from kafka_patterns.jobs.readings_to_postgres import COLUMNS as READING_COLUMNS
from kafka_patterns.runtime import spark

COLUMNS = ("source_topic", *READING_COLUMNS)
DDL = """CREATE TABLE IF NOT EXISTS {table} (
    id BIGSERIAL PRIMARY KEY, source_topic TEXT, run TEXT, sensor TEXT, station TEXT, seq BIGINT,
    temperature DOUBLE PRECISION, humidity DOUBLE PRECISION, event_time TIMESTAMPTZ,
    kafka_partition INT, kafka_offset BIGINT)"""


def merge(readings: DataFrame) -> DataFrame:
    """Parsed readings of all producer topics -> sink rows tagged with their source topic (pure)."""
    return readings.select(F.col("topic").alias("source_topic"), "run", "sensor", "station", "seq", "temperature",
                           "humidity", spark.event_time(F.col("ts")).alias("event_time"),
                           F.col("partition").alias("kafka_partition"), F.col("offset").alias("kafka_offset"))


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = base.parser(job, __doc__).parse_args(argv)
    postgres.ensure(postgres.LEDGER_DDL, DDL, table=job.table)
    base.readings_to_table(job, args, merge, COLUMNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())

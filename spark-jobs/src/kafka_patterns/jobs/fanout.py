"""pub-sub fan-out: three independent subscribers of the same readings topic.

    python -m kafka_patterns.jobs.fanout logger   [--available-now]   # every reading, once
    python -m kafka_patterns.jobs.fanout averager [--available-now]   # per-sensor count and mean temperature
    python -m kafka_patterns.jobs.fanout minmax   [--available-now]   # per-sensor count, min and max

Guarantee: each subscriber sees every message of the topic. Kafka keeps a record for
every reader (a topic is a log, reading does not remove anything); each subscriber is
its own Spark query with its own checkpoint (= its own offsets, like its own consumer
group), so none takes records from another. Each writes to its own PostgreSQL table
exactly once: foreachBatch writes the micro-batch's rows and its batch id in one
transaction (the batch ledger), and a batch replayed after a crash is skipped.
The aggregators write per-micro-batch partial aggregates (count, sum, min, max per
run and sensor) that a query combines; partial aggregates need no streaming state.
Each sends malformed records to the dead-letter topic with its own name in the `job` header.
"""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns import pg, spark
from kafka_patterns.jobs import base
from kafka_patterns.jobs.readings_to_postgres import run_to_postgres

ROLES = ("logger", "averager", "minmax")
AVG_COLUMNS = ("run", "sensor", "n", "temperature_sum")
MINMAX_COLUMNS = ("run", "sensor", "n", "temperature_min", "temperature_max")


def job_name(role: str) -> str:
    return f"fanout-{role}"


def averages(readings: DataFrame) -> DataFrame:
    """Partial per-(run, sensor) count and temperature sum of a batch (pure)."""
    return readings.groupBy("run", "sensor").agg(F.count(F.lit(1)).alias("n"),
                                                 F.sum("temperature").alias("temperature_sum"))


def min_max(readings: DataFrame) -> DataFrame:
    """Partial per-(run, sensor) count, min and max temperature of a batch (pure)."""
    return readings.groupBy("run", "sensor").agg(F.count(F.lit(1)).alias("n"),
                                                 F.min("temperature").alias("temperature_min"),
                                                 F.max("temperature").alias("temperature_max"))


def ddl(role: str, table: str) -> str:
    if role == "averager":
        return (f"CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, "
                "n BIGINT, temperature_sum DOUBLE PRECISION)")
    return (f"CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, "
            "n BIGINT, temperature_min DOUBLE PRECISION, temperature_max DOUBLE PRECISION)")


def run_aggregator(role: str, argv: list[str]) -> int:
    job = job_name(role)
    args = base.parser(job, __doc__).parse_args(argv)
    table = base.output_table(job)
    pg.ensure(pg.LEDGER_DDL, ddl(role, table))
    transform, columns = (averages, AVG_COLUMNS) if role == "averager" else (min_max, MINMAX_COLUMNS)
    session = spark.session(job)
    records = spark.read_stream(session, base.input_topics(job), args.starting_offsets, **base.source_options(args))
    sink = base.postgres_batch_sink(base.checkpoint_dir(job, args), table, columns)

    def write(batch_df, batch_id: int) -> None:
        sink(transform(batch_df), batch_id)

    readings, letters = base.valid_readings(records, job, args)
    base.await_all([letters, base.start(readings.writeStream.foreachBatch(write), job, args)])
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ROLES:
        print(f"usage: python -m kafka_patterns.jobs.fanout {{{'|'.join(ROLES)}}} [options]", file=sys.stderr)
        return 2
    role, rest = argv[0], argv[1:]
    if role == "logger":
        return run_to_postgres(job_name(role), rest, __doc__)
    return run_aggregator(role, rest)


if __name__ == "__main__":
    sys.exit(main())

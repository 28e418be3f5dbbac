"""pub-sub fan-out: three independent subscribers of the same readings topic. The
logger (every reading, once) is a readings_to_postgres job; this module runs the two
aggregators, each its own catalogue job with its role in its `args`:

    python -m kafka_patterns.jobs.fanout --job fanout-averager [--available-now]   # --role averager
    python -m kafka_patterns.jobs.fanout --job fanout-minmax   [--available-now]   # --role minmax

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

from kafka_patterns.clients import postgres
from kafka_patterns.jobs import base

ROLES = ("averager", "minmax")
AVG_COLUMNS = ("run", "sensor", "n", "temperature_sum")
MINMAX_COLUMNS = ("run", "sensor", "n", "temperature_min", "temperature_max")


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


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = base.parser(job, __doc__)
    p.add_argument("--role", choices=ROLES, required=True, help="which aggregate this subscriber keeps")
    args = p.parse_args(argv)
    postgres.ensure(postgres.LEDGER_DDL, ddl(args.role, job.table))
    transform, columns = (averages, AVG_COLUMNS) if args.role == "averager" else (min_max, MINMAX_COLUMNS)
    base.readings_to_table(job, args, transform, columns, per_batch=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

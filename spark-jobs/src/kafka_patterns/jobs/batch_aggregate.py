"""batch (scheduled): a Spark batch job that reads exactly the offset range since its
last successful run and writes per-sensor aggregates to PostgreSQL.

Guarantee: every record of the input is aggregated once (no gap, no overlap between
runs). How: the end offsets a run read up to are stored in PostgreSQL in the SAME
transaction as its aggregates (`batch_ranges`); the next run starts at them. A run
that dies before its commit leaves nothing behind and the next run reads the same
range again; a run that finds nothing new writes nothing (no-op). Runs of one ledger
key are serialised by a row lock, and a run whose start no longer matches the stored
end (another run committed meanwhile) rolls back. Malformed records are counted per
run (`batch_runs.malformed`) and sent to the dead-letter topic, never aggregated.

    python -m kafka_patterns.jobs.batch_aggregate --job batch-aggregate [--ledger-key K]
        [--starting-offsets JSON] [--ending-offsets JSON]

Scheduled every 10 minutes (catalogue `schedule`); one run processes what is there
and stops. Aggregates are keyed by (run, sensor): `run` is the producer run stamped
in each reading.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark
from kafka_patterns.runtime.fault_hooks import CRASH_EXIT_CODE

AGG_COLUMNS = ("run", "sensor", "n", "temperature_sum", "temperature_min", "temperature_max", "last_seq")
DDL = (
    """CREATE TABLE IF NOT EXISTS batch_runs (
        ledger_key TEXT NOT NULL, batch_run INT NOT NULL, records BIGINT NOT NULL, malformed BIGINT NOT NULL,
        finished_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (ledger_key, batch_run))""",
    """CREATE TABLE IF NOT EXISTS batch_ranges (
        ledger_key TEXT NOT NULL, batch_run INT NOT NULL, topic TEXT NOT NULL, kafka_partition INT NOT NULL,
        start_offset BIGINT NOT NULL, end_offset BIGINT NOT NULL,
        PRIMARY KEY (ledger_key, batch_run, topic, kafka_partition))""",
    """CREATE TABLE IF NOT EXISTS {table} (
        ledger_key TEXT NOT NULL, batch_run INT NOT NULL, run TEXT, sensor TEXT, n BIGINT,
        temperature_sum DOUBLE PRECISION, temperature_min DOUBLE PRECISION, temperature_max DOUBLE PRECISION,
        last_seq BIGINT)""",
    "CREATE TABLE IF NOT EXISTS batch_ledgers (ledger_key TEXT PRIMARY KEY)",
    # Offsets mean something only in the Kafka cluster they were read from.
    "ALTER TABLE batch_ranges ADD COLUMN IF NOT EXISTS kafka_cluster TEXT",
)
log = logging.getLogger("kafka_patterns.jobs.batch_aggregate")

Offsets = dict[str, dict[int, int]]


def aggregate(readings: DataFrame) -> DataFrame:
    """Valid readings -> one row per (run, sensor) with AGG_COLUMNS (pure: no I/O)."""
    return (readings.groupBy("run", "sensor")
            .agg(F.count("*").alias("n"), F.sum("temperature").alias("temperature_sum"),
                 F.min("temperature").alias("temperature_min"), F.max("temperature").alias("temperature_max"),
                 F.max("seq").alias("last_seq"))
            .select(*AGG_COLUMNS))


def plan_range(stored: Offsets, initial: Offsets, ends: Offsets) -> tuple[Offsets, Offsets]:
    """The range a run reads: from the stored end of the last run (else `initial`, else
    0) up to `ends`. A partition whose start is past its end is an error (the stored
    offsets are beyond the requested end: the ledger belongs to other offsets)."""
    start = {t: {p: stored.get(t, {}).get(p, initial.get(t, {}).get(p, 0)) for p in ps} for t, ps in ends.items()}
    for t, ps in ends.items():
        for p, end in ps.items():
            if start[t][p] > end:
                raise ValueError(f"{t}[{p}]: stored start {start[t][p]} is beyond the end {end}")
    return start, ends


def is_empty(start: Offsets, end: Offsets) -> bool:
    return all(start[t][p] == e for t, ps in end.items() for p, e in ps.items())


def stored_ends(conn, ledger_key: str, kafka_cluster: str) -> tuple[int, Offsets]:
    """(last batch_run of the ledger key, the end offsets of its last run on this Kafka
    cluster); (0, {}) before its first run. Ranges read from another cluster (one made
    again from scratch while PostgreSQL kept the ledger) do not count: their offsets
    would skip this cluster's records, or lie beyond its ends and stop every run."""
    (last_run,) = conn.execute("SELECT coalesce(max(batch_run), 0) FROM batch_ranges WHERE ledger_key = %s",
                               (ledger_key,)).fetchone()
    rows = conn.execute("""SELECT topic, kafka_partition, end_offset FROM batch_ranges
        WHERE ledger_key = %s AND kafka_cluster = %s AND batch_run = (SELECT max(batch_run) FROM batch_ranges
        WHERE ledger_key = %s AND kafka_cluster = %s)""",
                        (ledger_key, kafka_cluster, ledger_key, kafka_cluster)).fetchall()
    ends: Offsets = {}
    for t, p, o in rows:
        ends.setdefault(t, {})[p] = o
    if last_run and not rows:
        log.warning("%s: no run on Kafka cluster %s yet (the ledger's runs read another cluster): "
                    "starting from the beginning", ledger_key, kafka_cluster)
    return last_run, ends


def parse_offsets(text: str | None) -> Offsets:
    """Spark-style {"topic": {"partition": offset}} JSON -> {topic: {partition: offset}}."""
    if not text or text in ("earliest", "latest"):
        if text == "latest":
            raise ValueError("--starting-offsets latest is not meaningful for a range job; give JSON or earliest")
        return {}
    return {t: {int(p): int(o) for p, o in ps.items()} for t, ps in json.loads(text).items()}


def current_ends(topics: list[str]) -> Offsets:
    all_topics = catalogue.topics()
    return {t: kafka.end_offsets(t, all_topics[t].partitions) for t in topics}


def run_once(job: catalogue.Job, args: argparse.Namespace) -> dict:
    """One batch run; returns what it did (for the log and the tests)."""
    topics = list(job.inputs)
    ledger_key = args.ledger_key or job.name
    postgres.ensure(*DDL, table=job.table)
    with postgres.connect() as conn:
        conn.execute("INSERT INTO batch_ledgers VALUES (%s) ON CONFLICT DO NOTHING", (ledger_key,))
        conn.commit()
        # Serialise the runs of one ledger key until this run commits or rolls back.
        conn.execute("SELECT 1 FROM batch_ledgers WHERE ledger_key = %s FOR UPDATE", (ledger_key,))
        kafka_cluster = kafka.cluster_id(topics[0])
        last_run, stored = stored_ends(conn, ledger_key, kafka_cluster)
        # The end is taken under the lock: a run that waited for another one reads on from its end.
        ends = parse_offsets(args.ending_offsets) or current_ends(topics)
        start, end = plan_range(stored, parse_offsets(args.starting_offsets), ends)
        if is_empty(start, end):
            log.info("%s: nothing new since run %d (%s): no-op", ledger_key, last_run, json.dumps(end))
            return {"ledger_key": ledger_key, "batch_run": None, "records": 0, "start": start, "end": end}
        session = spark.session(job.name)
        parsed = spark.parse_readings(spark.read_batch(session, topics, start, end)).cache()
        try:
            records = parsed.count()
            malformed = parsed.where(F.col("error").isNotNull()).count()
            if malformed:  # before the commit: a crash re-reads the range and sends them again
                (spark.dead_letter_rows(parsed, job.deadletter_topic, job.name)
                 .write.format("kafka").options(**spark.kafka_sink_options()).save())
            rows = [tuple(r) for r in aggregate(parsed.where(F.col("error").isNull())).collect()]
        finally:
            parsed.unpersist()
        batch_run = last_run + 1
        conn.execute("INSERT INTO batch_runs (ledger_key, batch_run, records, malformed) VALUES (%s, %s, %s, %s)",
                     (ledger_key, batch_run, records, malformed))
        for t, ps in end.items():
            for p, e in ps.items():
                conn.execute("""INSERT INTO batch_ranges (ledger_key, batch_run, topic, kafka_partition,
                    start_offset, end_offset, kafka_cluster) VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                             (ledger_key, batch_run, t, p, start[t][p], e, kafka_cluster))
        postgres.insert_rows(conn, job.table, ("ledger_key", "batch_run", *AGG_COLUMNS),
                       ((ledger_key, batch_run, *r) for r in rows))
        crash_before_commit_if_asked(ledger_key)
        # The connection's context manager commits: aggregates and end offsets together.
    log.info("%s: run %d read %d records (%d malformed) into %d aggregates", ledger_key, batch_run, records,
             malformed, len(rows))
    return {"ledger_key": ledger_key, "batch_run": batch_run, "records": records, "malformed": malformed,
            "start": start, "end": end}


def crash_before_commit_if_asked(ledger_key: str) -> None:
    """Fault injection for the tests: with KP_CRASH_BEFORE_COMMIT=1 the process dies
    (os._exit, no cleanup) after writing its aggregates and ranges, before the commit."""
    if os.environ.get("KP_CRASH_BEFORE_COMMIT") == "1":
        log.warning("%s: KP_CRASH_BEFORE_COMMIT: crashing before the commit", ledger_key)
        os._exit(CRASH_EXIT_CODE)


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = base.parser(job, __doc__)
    p.add_argument("--ledger-key", default=None,
                   help="namespace of the stored ranges and aggregates (default: the job name)")
    p.add_argument("--ending-offsets", default=None,
                   help='read up to these offsets, {"topic": {"partition": offset}} JSON (default: the current end)')
    args = p.parse_args(argv)
    # --available-now, --checkpoint, --trigger-seconds: a batch job always runs once and stops.
    run_once(job, args)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    sys.exit(main())

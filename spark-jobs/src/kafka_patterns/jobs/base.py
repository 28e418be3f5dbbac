"""What every job shares: the command line, how a streaming query is run (bounded
with --available-now, for tests and the demo, or continuously), and the PostgreSQL
foreachBatch sink."""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from kafka_patterns import catalogue, credentials, pg, settings

log = logging.getLogger("kafka_patterns.jobs")


def parser(job: str, doc: str | None) -> argparse.ArgumentParser:
    """The options every job takes; a job adds its own before parse_args."""
    credentials.started_as_job(job)
    spec = catalogue.jobs()[job]
    p = argparse.ArgumentParser(prog=spec["module"], description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--available-now", action="store_true",
                   help="process what the inputs hold now, then stop (default: run until stopped)")
    p.add_argument("--starting-offsets", default="earliest",
                   help="earliest, latest or Spark's JSON {topic: {partition: offset}}; new checkpoints only")
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint directory (default: $CHECKPOINT_ROOT/<job>)")
    p.add_argument("--trigger-seconds", type=float, default=2.0, help="micro-batch interval when running continuously")
    p.add_argument("--max-offsets-per-trigger", type=int, default=None,
                   help="cap a micro-batch (smaller batches: finer-grained restarts)")
    return p


def input_topics(job: str) -> list[str]:
    return [i for i in catalogue.jobs()[job]["inputs"] if not i.startswith("postgres:")]


def lookup_topics(job: str) -> list[str]:
    """Topics the job reads whole, as a table (catalogue jobs.<job>.lookups)."""
    return list(catalogue.jobs()[job].get("lookups", []))


def output_topics(job: str) -> list[str]:
    return [o for o in catalogue.jobs()[job]["outputs"] if not o.startswith("postgres:")]


def deadletter_topic(job: str) -> str:
    """Where the job sends the records it cannot process (catalogue jobs.<job>.deadletter)."""
    topic = catalogue.jobs()[job].get("deadletter")
    if not topic:
        raise catalogue.CatalogueError(f"jobs.{job}.deadletter: not set; this job dead-letters bad records")
    return topic


def output_table(job: str) -> str:
    """The job's PostgreSQL sink table (catalogue output `postgres:<table>`)."""
    tables = [o.removeprefix("postgres:") for o in catalogue.jobs()[job]["outputs"] if o.startswith("postgres:")]
    if len(tables) != 1:
        raise catalogue.CatalogueError(f"jobs.{job}.outputs: expected one postgres:<table>, found {tables}")
    return tables[0]


def checkpoint_dir(job: str, args: argparse.Namespace, query: str = "main") -> str:
    base = args.checkpoint or settings.checkpoint_root() / job
    return str(Path(base) / query)


def source_options(args: argparse.Namespace) -> dict[str, str]:
    opts = {}
    if args.max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(args.max_offsets_per_trigger)
    return opts


def start(writer, job: str, args: argparse.Namespace, query: str = "main"):
    """Start a DataStreamWriter with the job's checkpoint and trigger; returns the query."""
    writer = writer.option("checkpointLocation", checkpoint_dir(job, args, query)).queryName(f"{job}-{query}")
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{args.trigger_seconds} seconds")
    return writer.start()


def await_all(queries: Sequence) -> None:
    """Wait until every query has ended (bounded runs) or one has failed, which raises
    with Spark's error: a job whose side query fails does not run on without it."""
    while True:
        for q in queries:
            if q.exception() is not None:
                raise RuntimeError(f"query {q.name} failed: {q.exception()}")
        if not any(q.isActive for q in queries):
            return
        next(q for q in queries if q.isActive).awaitTermination(1.0)


def valid_readings(records, job: str, args: argparse.Namespace, query: str = "deadletters"):
    """The valid readings among Kafka records, and a started query that sends the others
    to the job's dead-letter topic with their reason (spark.dead_letter_rows). The letters
    query reads the same source with its own checkpoint, so a bad record neither stops
    the job nor vanishes; its Kafka sink is at-least-once (a letter may repeat after a
    crash). Returns (readings, letters query): the job awaits both."""
    from kafka_patterns import spark  # here: the client jobs use this module without Spark

    parsed = spark.parse_readings(records)
    return spark.valid_only(parsed), start_dead_letters(parsed, job, args, query)


def start_dead_letters(parsed, job: str, args: argparse.Namespace, query: str = "deadletters"):
    """Start the query that sends the rows of `parsed` with an `error` to the job's
    dead-letter topic (columns of spark.dead_letter_rows); returns the query."""
    from kafka_patterns import spark

    letters = spark.dead_letter_rows(parsed, deadletter_topic(job), job)
    return start(letters.writeStream.format("kafka").options(**spark.kafka_options()), job, args, query)


def postgres_batch_sink(ledger_key: str, table: str, columns: Sequence[str],
                        exactly_once: bool = True, unique: Sequence[str] = ()) -> Callable:
    """A foreachBatch function writing a micro-batch's rows to `table`.

    exactly_once=True writes the rows and the batch id (spark_batches ledger) in one
    PostgreSQL transaction and skips a batch id already committed: a batch Spark
    replays after a crash (its checkpoint did not record the commit) is not written
    twice. exactly_once=False is the plain at-least-once foreachBatch. Batch ids
    restart with a new checkpoint, so the ledger key is the checkpoint directory plus
    the id of the query it holds (ledger_name): a checkpoint wiped and started again at
    the same path (a new volume, `make clean`) against a kept database would otherwise
    have its first batches skipped as "already committed", and their rows lost.
    `unique` names the columns of the table's unique index: a row whose key is already
    stored (the same reading produced twice) is skipped and counted in the log.
    """
    def write(batch_df, batch_id: int) -> None:
        rows = [tuple(r) for r in batch_df.select(*columns).toLocalIterator()]
        with pg.connect() as conn:
            if exactly_once and not pg.claim_batch(conn, ledger := ledger_name(ledger_key), batch_id):
                log.warning("%s: batch %d already committed, skipped", ledger, batch_id)
                return
            # A row the table refuses is set aside, not retried with the batch forever.
            done = pg.insert_rows_isolating_failures(conn, table, columns, rows, unique)
        for row, reason in done.refused:
            log.error("%s: batch %d: %s refused a row (%s); the rest of the batch is written: %r",
                      ledger_key, batch_id, table, reason, row)
        if done.duplicates:
            log.warning("%s: batch %d: %d duplicate %s of %s already stored, skipped", ledger_key, batch_id,
                        done.duplicates, "/".join(unique), table)
        crash_after_write_if_asked(ledger_key, batch_id)
    return write


def ledger_name(checkpoint: str) -> str:
    """<checkpoint>@<query id>: Spark writes the query's id into <checkpoint>/metadata
    when the query first starts and keeps it for as long as the checkpoint lives."""
    metadata = Path(checkpoint) / "metadata"
    try:
        return f"{checkpoint}@{json.loads(metadata.read_text())['id']}"
    except (OSError, ValueError, KeyError) as e:
        raise RuntimeError(f"cannot read the query id of checkpoint {checkpoint} ({metadata}: {e}): "
                           "the exactly-once ledger needs it, so the checkpoint must be a local "
                           "or mounted directory") from e


def crash_after_write_if_asked(checkpoint: str, batch_id: int) -> None:
    """Fault injection for the delivery tests: with KP_CRASH_AFTER_BATCH=N the process
    dies (os._exit, no cleanup) right after batch N's sink write and before Spark
    records the batch in its checkpoint: the worst moment for a sink. Once per
    checkpoint (a marker file), so the restarted job replays batch N and carries on."""
    target = os.environ.get("KP_CRASH_AFTER_BATCH")
    marker = Path(checkpoint) / f"crashed-after-batch-{target}"
    if target is not None and int(target) == batch_id and not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        log.warning("KP_CRASH_AFTER_BATCH=%s: crashing after the sink write of batch %d", target, batch_id)
        os._exit(137)

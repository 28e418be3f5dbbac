"""What every job shares: which catalogue job it runs (--job or $KAFKA_PATTERNS_JOB) and
its command line, how a streaming query is run (bounded with --available-now, for
tests and the demo, or continuously), and the PostgreSQL foreachBatch sink."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue, credentials, settings
from kafka_patterns.runtime.dead_letters import CONFLICTING_DUPLICATE, STORED_HEADER, DeadLetters, with_reason
from kafka_patterns.runtime.fault_hooks import CRASH_AFTER_BATCH, CRASH_EXIT_CODE

log = logging.getLogger("kafka_patterns.jobs")
JOB_VARIABLE = "KAFKA_PATTERNS_JOB"  # the job a pod runs (the chart sets it in every pod)
MICRO_BATCH, REAL_TIME = "micro-batch", "real-time"  # catalogue jobs.<job>.mode, --mode
MODES = (MICRO_BATCH, REAL_TIME)


def job_spec(argv: Sequence[str] | None, module: str) -> catalogue.Job:
    """The catalogue job this process runs, looked up once: --job NAME, else
    $KAFKA_PATTERNS_JOB. `module` is the caller's (`__spec__.name`): a job another
    module runs is refused too. Fails fast naming both ways to give the job."""
    pick = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pick.add_argument("--job")
    name = pick.parse_known_args(sys.argv[1:] if argv is None else list(argv))[0].job or os.environ.get(JOB_VARIABLE)
    served = [j.name for j in catalogue.job_specs().values() if j.module == module]
    how = (f"pass --job NAME or set {JOB_VARIABLE}=NAME, NAME one of the jobs of {catalogue.CATALOGUE_FILE} "
           f"with module {module}: {', '.join(served) or 'none'}")
    if not name:
        raise SystemExit(f"{module}: no job given: {how}")
    spec = catalogue.job_specs().get(name)
    if spec is None:
        raise SystemExit(f"{module}: {catalogue.CATALOGUE_FILE} declares no job {name!r}: {how}")
    if spec.module != module:
        raise SystemExit(f"{module}: job {name!r} runs {spec.module}, not this module: {how}")
    credentials.started_as_job(spec.name)
    return spec


class JobParser(argparse.ArgumentParser):
    """The command line of one catalogue job. The job's catalogue `args` are read first,
    then the command line (a later option wins): `--job NAME` alone runs the job as
    declared, so the chart passes the module and the pod's own options only."""

    def __init__(self, job: catalogue.Job, doc: str | None):
        super().__init__(prog=f"python -m {job.module}", description=doc,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        self.job = job
        self.add_argument("--job", default=job.name, metavar="NAME",
                          help=f"the catalogue job to run (default: ${JOB_VARIABLE}); here: {job.name}")

    def parse_args(self, args: Sequence[str] | None = None, namespace=None) -> argparse.Namespace:
        given = sys.argv[1:] if args is None else list(args)
        return super().parse_args([*self.job.args, *given], namespace)


# The dead-letter query re-reads the job's input on a trigger of its own, at least this
# long: a letter is for a person or a repair job, not latency-bound, and each micro-batch
# costs its planning and a Spark job whatever it holds. At the main query's 0.5 s it ran
# as many batches as the main query and took as much of the host (make bench: exactly-once).
DEAD_LETTER_TRIGGER_SECONDS = 5.0


def parser(job: catalogue.Job, doc: str | None) -> JobParser:
    """The options every Spark job takes; a job adds its own before parse_args."""
    p = JobParser(job, doc)
    p.add_argument("--available-now", action="store_true",
                   help="process what the inputs hold now, then stop (default: run until stopped)")
    p.add_argument("--starting-offsets", default="earliest",
                   help="earliest, latest or Spark's JSON {topic: {partition: offset}}; new checkpoints only")
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint directory (default: $CHECKPOINT_ROOT/<job>)")
    p.add_argument("--trigger-seconds", type=float, default=2.0,
                   help="micro-batch interval when running continuously (a dead-letter query's: at least "
                        f"{DEAD_LETTER_TRIGGER_SECONDS:g} s)")
    p.add_argument("--max-offsets-per-trigger", type=int, default=None,
                   help="cap a micro-batch (smaller batches: finer-grained restarts)")
    p.add_argument("--mode", choices=MODES, default=job.mode,
                   help="running continuously: micro-batches on the trigger, or Spark's real-time mode "
                        "(stateless queries; default: the catalogue's jobs.<job>.mode)")
    p.add_argument("--checkpoint-seconds", type=float, default=30.0,
                   help="real-time mode: how often the long-running batch checkpoints (not a latency)")
    return p


def checkpoint_dir(job: catalogue.Job, args: argparse.Namespace, query: str = "main") -> str:
    base = args.checkpoint or settings.checkpoint_root() / job.name
    return str(Path(base) / query)


def source_options(args: argparse.Namespace) -> dict[str, str]:
    opts = {}
    if args.max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(args.max_offsets_per_trigger)
    return opts


# Asynchronous progress tracking: a micro-batch does not wait for its offset and commit
# log writes (a few hundred ms of each batch here). Spark takes it for stateless queries
# with a Kafka sink and a processing-time trigger only. Interval 0 still writes every
# batch's entries (asynchronously), so the logs have no gaps and a bounded run
# (available-now, synchronous) can carry on from the same checkpoint; a replayed batch
# after a crash may be larger, which an at-least-once Kafka sink already allows for.
ASYNC_PROGRESS = {"asyncProgressTrackingEnabled": "true", "asyncProgressTrackingCheckpointIntervalMs": "0"}


def start(writer, job: catalogue.Job, args: argparse.Namespace, query: str = "main",
          stateless_kafka_sink: bool = False, min_trigger_seconds: float = 0.0):
    """Start a DataStreamWriter with the job's checkpoint and trigger (--trigger-seconds,
    at least min_trigger_seconds); returns the query. A bounded run (--available-now) is
    micro-batches whatever the mode: real-time mode runs until stopped. A stateless query
    writing Kafka tracks its progress asynchronously in micro-batch mode (ASYNC_PROGRESS)."""
    writer = writer.option("checkpointLocation", checkpoint_dir(job, args, query)).queryName(f"{job.name}-{query}")
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    elif args.mode == REAL_TIME:
        # Update is the only output mode real-time mode takes; for these stateless
        # queries it writes each row once, like append.
        writer = writer.outputMode("update").trigger(realTime=f"{args.checkpoint_seconds} seconds")
    else:
        writer = writer.trigger(processingTime=f"{max(args.trigger_seconds, min_trigger_seconds)} seconds")
        if stateless_kafka_sink:
            writer = writer.options(**ASYNC_PROGRESS)
    return writer.start()


def refuse_real_time(job: catalogue.Job, args: argparse.Namespace, why: str) -> None:
    """Fail fast, naming the key, when a job that cannot run in real-time mode is asked to."""
    if args.mode == REAL_TIME and not args.available_now:
        raise SystemExit(f"jobs.{job.name}.mode: real-time is for stateless Kafka-to-Kafka queries; {why}. "
                         "Use micro-batch (or leave mode out).")


@contextlib.contextmanager
def stopping_on_sigterm() -> Iterator[threading.Event]:
    """An event SIGTERM (a pod stopping, a rolling restart, `kill`) sets, asking the job
    to stop after the batch in hand, so its write, its letters and its commit complete:
    a client job's `finally` then closes its consumer (leaving the group, handing its
    partitions over at once), a Spark job stops its queries before its JVM goes
    (await_all). Without it, Python dies on SIGTERM mid-batch like on a SIGKILL. Only the
    main thread may install a handler; elsewhere (a job run in a test's or the bench's
    thread) the event stays unarmed. The caller's handler is back on exit: a job run
    in-process (the demo, a scenario) leaves its caller's SIGTERM as it was."""
    stopping = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stopping
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        yield stopping
    finally:
        signal.signal(signal.SIGTERM, previous)


# How long a stop waits for a micro-batch in hand to end before stopping in its middle.
STOP_BETWEEN_BATCHES_SECONDS = 30.0


def stop_queries(queries: Sequence, between_batches_within: float = STOP_BETWEEN_BATCHES_SECONDS) -> None:
    """Stop the queries still running, each between two micro-batches when one ends in
    time: stopped in the middle of a Python foreachBatch, Spark logs a long
    StackOverflowError trace (the batch is replayed from the checkpoint either way).
    A real-time query has no such boundary (its one batch runs until stopped): it stops
    at once, its running epoch's tasks aborted (why that logs nothing: log4j2.properties)."""
    for q in queries:
        if q.isActive and not real_time(q):
            deadline = time.monotonic() + between_batches_within
            while q.isActive and q.status["isTriggerActive"] and time.monotonic() < deadline:
                time.sleep(0.05)
        q.stop()


def real_time(query) -> bool:
    """Whether a started query runs in Spark's real-time mode."""
    return "RealTime" in query._jsq.streamingQuery().trigger().getClass().getSimpleName()


def await_all(queries: Sequence) -> None:
    """Wait until every query has ended (bounded runs) or one has failed, which raises
    with Spark's error: a job whose side query fails does not run on without it. SIGTERM
    stops the queries first (stop_queries), then returns: left to the JVM's shutdown
    hook, the SparkContext stops under a running query, which fails with a
    NullPointerException and logs it at ERROR (SPARK-59242)."""
    with stopping_on_sigterm() as stopping:
        while True:
            for q in queries:
                if q.exception() is not None:
                    raise RuntimeError(f"query {q.name} failed: {q.exception()}")
            if stopping.is_set():
                from kafka_patterns.runtime import streaming_metrics  # here: it imports pyspark

                streaming_metrics.close()
                stop_queries(queries)
                return
            # One read of isActive per query: a query may end between two reads (a second
            # read found none active and raised StopIteration, failing a finished run).
            active = [q for q in queries if q.isActive]
            if not active:
                return
            active[0].awaitTermination(1.0)


def valid_readings(records, job: catalogue.Job, args: argparse.Namespace, query: str = "deadletters",
                   sink_letters: bool = False):
    """The valid readings among Kafka records, and a started query that sends the others
    to the job's dead-letter topic with their reason (spark.dead_letter_rows). The letters
    query reads the same source with its own checkpoint, so a bad record neither stops
    the job nor vanishes; its Kafka sink is at-least-once (a letter may repeat after a
    crash). With sink_letters, each reading comes with its letter should the sink not
    store it (spark.SINK_LETTER). Returns (readings, letters query): the job awaits both."""
    from kafka_patterns.runtime import spark  # here: the client jobs use this module without Spark

    parsed = spark.parse_readings(records)
    valid = spark.valid_with_sink_letters(parsed, job.name) if sink_letters else spark.valid_only(parsed)
    return valid, start_dead_letters(parsed, job, args, query)


def start_dead_letters(parsed, job: catalogue.Job, args: argparse.Namespace, query: str = "deadletters"):
    """Start the query that sends the rows of `parsed` with an `error` to the job's
    dead-letter topic (columns of spark.dead_letter_rows); returns the query."""
    from kafka_patterns.runtime import spark

    letters = spark.dead_letter_rows(parsed, job.deadletter_topic, job.name)
    return start(letters.writeStream.format("kafka").options(**spark.kafka_sink_options()), job, args, query,
                 stateless_kafka_sink=True, min_trigger_seconds=DEAD_LETTER_TRIGGER_SECONDS)


def readings_to_table(job: catalogue.Job, args: argparse.Namespace, rows: Callable, columns: Sequence[str],
                      exactly_once: bool = True, unique: Sequence[str] = (), per_batch: bool = False) -> None:
    """The shape of the readings -> PostgreSQL jobs: stream the valid readings of the
    job's inputs, turned into `rows`, into its table by postgres_batch_sink; bad records
    go to its dead letters. Returns when the queries end. `rows` is a projection applied
    in the streaming query (planned by Spark once, not rebuilt by Python calls every
    micro-batch: 0.14 s of py4j per batch in make bench), or with per_batch=True, a
    transformation of each micro-batch on its own (fan-out's per-batch aggregates)."""
    from kafka_patterns.runtime import spark

    session = spark.session(job.name)
    records = spark.read_stream(session, list(job.inputs), args.starting_offsets, **source_options(args))
    # A row's partition and offset name its record only in a job of one input topic.
    sink = postgres_batch_sink(checkpoint_dir(job, args), job.table, columns, exactly_once, unique,
                               letters=(lambda: DeadLetters(job.name, job.deadletter_topic))
                               if len(job.inputs) == 1 else None)

    def write_each_batch(batch_df, batch_id: int) -> None:
        sink(rows(batch_df), batch_id)

    readings, letters = valid_readings(records, job, args, sink_letters=not per_batch)
    stream, write = (readings, write_each_batch) if per_batch else (rows(readings), sink)
    await_all([letters, start(stream.writeStream.foreachBatch(write), job, args)])


def _bytes(value: str | bytearray | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else None if value is None else bytes(value)


# A sink row's columns that say where it was read from, not what it says: a copy of a
# stored reading read from another offset is the same reading.
PROVENANCE = ("kafka_partition", "kafka_offset")


def postgres_batch_sink(ledger_key: str, table: str, columns: Sequence[str],
                        exactly_once: bool = True, unique: Sequence[str] = (),
                        letters: Callable[[], DeadLetters] | None = None) -> Callable:
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
    stored (the same reading produced twice) is skipped and counted in the log; a
    conflicting version of it (other values) is not written but dead-lettered. Where
    the rows carry their spark.SINK_LETTER, a row the table refuses (or a conflicting
    version) goes to the dead letters (`letters` makes the producer, on first use) with
    the reason, flushed before the transaction commits: a crash between the two sends
    a letter twice, never none. Without a letter such a row is only logged.
    """
    dead_letters: list[DeadLetters] = []  # made on first use, kept for the query's life

    def write(batch_df, batch_id: int) -> None:
        # One collect: one Spark job per micro-batch (a second where a row was not stored).
        # toLocalIterator ran a job per input partition, one after the other, and saved no
        # memory here: the rows are held together anyway, for the one transaction.
        from kafka_patterns.runtime import spark

        lettered = (letters is not None and spark.SINK_LETTER in batch_df.columns
                    and all(c in columns for c in PROVENANCE))
        rows = [tuple(r) for r in batch_df.select(*columns).collect()]
        with postgres.connect() as conn:
            if exactly_once and not postgres.claim_batch(conn, ledger := ledger_name(ledger_key), batch_id):
                log.warning("%s: batch %d already committed, skipped", ledger, batch_id)
                return
            # A row the table refuses is set aside, not retried with the batch forever.
            done = postgres.insert_rows_isolating_failures(conn, table, columns, rows, unique,
                                                     [c for c in columns if c in PROVENANCE])
            unstored = ([(n, f"refused by {table}: {reason}", ()) for n, reason in done.refused]
                        + [(n, CONFLICTING_DUPLICATE, ((STORED_HEADER, version.encode()),))
                           for n, version in done.conflicts])
            if lettered and unstored:
                if not dead_letters:
                    dead_letters.append(letters())
                send_sink_letters(dead_letters[0], batch_df, columns, rows, unstored)
        for n, reason, _ in unstored:
            log.error("%s: batch %d: %s did not store a row (%s)%s: %r", ledger_key, batch_id, table, reason,
                      "; dead-lettered" if lettered else "", rows[n])
        if done.duplicates:
            log.warning("%s: batch %d: %d duplicate %s of %s already stored, skipped", ledger_key, batch_id,
                        done.duplicates, "/".join(unique), table)
        crash_after_write_if_asked(ledger_key, batch_id)
    return write


def send_sink_letters(dead_letters: DeadLetters, batch_df, columns: Sequence[str], rows: Sequence[tuple],
                      unstored: Sequence[tuple[int, str, tuple]]) -> None:
    """Dead-letter the rows (index, reason, extra headers) a sink did not store, each with
    its spark.SINK_LETTER, and wait for the broker's acknowledgement. The letters are
    collected only now, in a second pass over the batch, found by PROVENANCE: collecting
    them with every row tripled the bytes each micro-batch brings to the driver."""
    from kafka_patterns.runtime import spark

    where = [columns.index(c) for c in PROVENANCE]
    of = {tuple(r[:-1]): r[-1] for r in batch_df.select(*PROVENANCE, spark.SINK_LETTER).collect()}
    for n, reason, extra in unstored:
        letter = of[tuple(rows[n][i] for i in where)]  # Spark's binary comes as bytearray
        dead_letters.send_letter(_bytes(letter["key"]), _bytes(letter["value"]), with_reason(
            [(h["key"], _bytes(h["value"])) for h in letter["headers"]], reason, *extra))
    dead_letters.flush()


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
    target = os.environ.get(CRASH_AFTER_BATCH)
    marker = Path(checkpoint) / f"crashed-after-batch-{target}"
    if target is not None and int(target) == batch_id and not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        log.warning("KP_CRASH_AFTER_BATCH=%s: crashing after the sink write of batch %d", target, batch_id)
        os._exit(CRASH_EXIT_CODE)

"""Running catalogue jobs and reading what they wrote, for the scenarios, the bench and
the tests alike: run ids, offsets, a job run to completion in this process (or as a
one-shot copy of its Kubernetes application), a job as its own killable process,
kills mid-stream, waits on sink counts and consumer groups, and reading a range of
records back. Nothing here judges a result: that is the scenarios' part."""

from __future__ import annotations

import contextlib
import importlib
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePath
from typing import TextIO

import psycopg
from confluent_kafka import KafkaException, TopicPartition

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue, credentials, settings
from kafka_patterns.runtime import readings
from kafka_patterns.runtime.fault_hooks import CRASH_AFTER_BATCH, CRASH_EXIT_CODE
from pattern_harness.job_processes import FailureMode, JobService


def new_run() -> str:
    return uuid.uuid4().hex[:12]


# Where the scenarios' step-by-step lines go: the terminal, or a command's log when it
# prints one line per pattern instead (console.quiet).
_details: Path | None = None


def details_to(path: Path | None) -> None:
    global _details
    _details = path


class _JobOutput:
    """sys.stdout and sys.stderr into the details' log while at least one job runs.
    They are the process's, not a thread's: fan-out runs its subscribers in threads at
    once, and a redirect per thread restored them out of order, leaving a closed log
    file as sys.stderr (the next print raised "I/O operation on closed file")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs = 0
        self._saved: tuple[TextIO, TextIO] | None = None
        self._log: TextIO | None = None

    def enter(self, path: Path) -> None:
        with self._lock:
            if self._jobs == 0:
                self._log = open(path, "a")  # noqa: SIM115 - closed by the last job to leave
                self._saved = (sys.stdout, sys.stderr)
                sys.stdout = sys.stderr = self._log
            self._jobs += 1

    def leave(self) -> None:
        with self._lock:
            self._jobs -= 1
            if self._jobs == 0 and self._saved is not None and self._log is not None:
                sys.stdout, sys.stderr = self._saved
                self._log.close()
                self._saved = self._log = None


_job_output = _JobOutput()


@contextlib.contextmanager
def job_output() -> Iterator[None]:
    """A job run in this process prints what it would print in its pod (a skipped
    batch, its counts): into the details' log when there is one."""
    if _details is None:
        yield
        return
    _job_output.enter(_details)
    try:
        yield
    finally:
        _job_output.leave()


def progress(message: str) -> None:
    if _details is None:
        print(f"    {message}", file=sys.stderr, flush=True)
    else:
        with open(_details, "a") as out:
            out.write(f"    {message}\n")


def end_offsets(topics: Sequence[str]) -> dict[str, dict[int, int]]:
    """Current end of every partition of the topics: {topic: {partition: offset}}."""
    all_topics = catalogue.topics()
    return {t: kafka.end_offsets(t, all_topics[t].partitions) for t in topics}


def seed_group(group: str, topic: str, offsets: dict[int, int]) -> None:
    """Start a new consumer group at these offsets rather than the topic's beginning."""
    seed = kafka.consumer(group)
    try:
        seed.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        seed.close()


def group_caught_up(group: str, ends: dict[str, dict[int, int]]) -> bool:
    """Whether the group's committed offsets have reached `ends` ({topic: {partition:
    offset}}): it has consumed, and committed, everything up to there."""
    probe = kafka.consumer(group)  # never subscribes: it joins nothing, only reads offsets
    try:
        wanted = [TopicPartition(t, p) for t, ps in ends.items() for p in ps]
        committed = probe.committed(wanted, timeout=10)
    finally:
        probe.close()
    return all(tp.offset >= ends[tp.topic][tp.partition] for tp in committed)


def committed_total(probe, group: str, topic: str) -> int:
    """Sum of the group's committed offsets on topic, read by `probe` (a consumer that
    never joins the group); a timed-out lookup (a busy broker, a coordinator moving) is
    retried rather than failing the scenario."""
    parts = [TopicPartition(topic, p) for p in range(catalogue.topics()[topic].partitions)]

    def lookup() -> tuple[int] | None:  # a tuple: a total of 0 is an answer too
        try:
            return (sum(max(tp.offset, 0) for tp in probe.committed(parts, timeout=10)),)
        except KafkaException as e:
            progress(f"committed offsets of {group} not read ({e}); retrying")
            return None
    return kafka.wait_until(lookup, 60, interval=0.5, what=f"committed offsets of {group}")[0]


def committed_past(probe, group: str, topic: str, since: int, at_least: int, service: JobService,
                   timeout: float = 60) -> int:
    """Wait until the group has committed at least `at_least` records of topic beyond the
    committed total `since`, while `service` (the job committing) runs; returns how many.
    The job exiting first fails at once, with the end of its log."""
    def enough() -> int | None:
        if not service.alive():
            raise RuntimeError(f"{service.job} exited early; {service.log_tail()}")
        return c if (c := committed_total(probe, group, topic) - since) >= at_least else None
    return kafka.wait_until(enough, timeout, interval=0.2, what=f"{service.job} to commit {at_least} records")


def read_committed(topic: str, starting: dict[int, int], run: str, expect: int, timeout: float = 60):
    """Record ids (sensor, seq) of the run's readings in the topic, as a read_committed
    consumer sees them; stops `timeout` seconds in even short of `expect` (the shortfall
    is the caller's to count as lost)."""
    consumer = kafka.consumer(f"verify-{run}", **{"isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, p, o) for p, o in starting.items()])
    seen: list[tuple[str, int]] = []

    def drained() -> bool:
        for m in consumer.consume(500, timeout=0.5):
            if not m.error():
                r, _ = readings.parse(m.value())
                if r is not None and r.run == run:
                    seen.append(r.record_id)
        return len(seen) >= expect

    try:
        kafka.wait_until(drained, timeout, interval=0, what=f"{expect} committed records in {topic}")
        # Anything beyond: a quiet extra poll shows duplicates, if there were any.
        drained()
    except TimeoutError:
        pass  # counted as lost by the caller
    finally:
        consumer.close()
    return seen


def spark_offsets(offsets: dict[str, dict[int, int]]) -> str:
    """Spark's startingOffsets JSON for a {topic: {partition: offset}} map."""
    return json.dumps({t: {str(p): o for p, o in ps.items()} for t, ps in offsets.items()})


def job_args(job: str, run: str, starting: dict[str, dict[int, int]] | None, *extra: str,
             bounded: bool = True, checkpoint_root: PurePath | None = None) -> list[str]:
    """A checkpoint of this run (under checkpoint_root: where the job runs, default
    here), starting where the run's input begins; bounded adds --available-now
    (process what is there, then stop). Not the job's catalogue args, nor the job
    itself: the module reads those, and whoever starts it names the job."""
    args = [*(["--available-now"] if bounded else []), "--checkpoint", str(checkpoint(job, run, checkpoint_root))]
    if starting is not None:
        args += ["--starting-offsets", spark_offsets(starting)]
    return [*args, *extra]


def checkpoint(job: str, run: str, root: PurePath | None = None) -> Path:
    """The run's checkpoint of the job; root is where the job runs (default: here)."""
    return Path(root or settings.checkpoint_root()) / "scenarios" / run / job


def job_log(job: str, run: str) -> Path:
    """The log of the run's job processes, beside the run's checkpoints (its folder made)."""
    log = checkpoint(job, run).parent / f"{job}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return log


def run_job(job: str, run: str, starting: dict[str, dict[int, int]] | None = None, *extra: str) -> None:
    """Run a catalogue job to completion: in this process (Spark jobs share one
    session), or with KP_JOB_RUNNER=kubernetes as a one-shot copy of its deployed
    SparkApplication, its checkpoint on the application's volume."""
    if settings.job_runner() == "kubernetes":
        from pattern_harness import kube_jobs

        # The application's pods know their job: the chart sets KAFKA_PATTERNS_JOB.
        root = kube_jobs.checkpoint_root(kube_jobs.deployed_spec(kube_jobs.connect(), job))
        kube_jobs.run_once(job, job_args(job, run, starting, *extra, checkpoint_root=root))
        return
    module = importlib.import_module(catalogue.job(job).module)
    with credentials.as_user(job), job_output():
        rc = module.main(["--job", job, *job_args(job, run, starting, *extra)])
    if rc:
        raise RuntimeError(f"job {job} exited with {rc}")


def spawn_job(job: str, args: Sequence[str], log: Path | None = None,
              env: dict[str, str] | None = None) -> JobService:
    """Start a catalogue job as its own process group (so a kill takes its JVM too)."""
    return JobService(job, args, log, env).start()


# The failure modes run_with_faults injects into a job with a checkpoint.
RESTARTED_FAULTS = (FailureMode.CRASH_AFTER_WRITE, FailureMode.SIGKILL, FailureMode.CLEAN_STOP)


def unsupported(faults: Sequence[FailureMode], supported: Iterable[FailureMode], who: str) -> None:
    """Fail fast on a failure mode the scenario cannot inject, naming those it can."""
    supported = tuple(supported)
    if bad := [f.value for f in faults if f not in supported]:
        raise ValueError(f"{who} cannot inject {bad}; it injects {[f.value for f in supported]}")


def run_with_faults(job: str, run: str, starting: dict[str, dict[int, int]], faults: Sequence[FailureMode],
                    count_sql: str, total: int, *extra: str, timeout: float = 90,
                    drain: Sequence[str] = ()) -> list[str]:
    """Run a job as its own process, inject `faults` one after another mid-stream, each
    time restarting it from its checkpoint, then drain it bounded. Returns what each
    fault was and where it landed. count_sql counts the run's sink rows; `drain` adds
    options for the final bounded run only (e.g. bigger micro-batches).
    - crash-after-write: the job exits right after the sink write of its second
      micro-batch and before its checkpoint commit (KP_CRASH_AFTER_BATCH), the worst
      case for duplicates; only a job with a foreachBatch sink can.
    - sigkill / clean-stop: SIGKILL / SIGTERM once the sink has grown by its share."""
    unsupported(faults, RESTARTED_FAULTS, f"run_with_faults({job})")
    log = job_log(job, run)
    service = JobService(job, job_args(job, run, starting, *extra, bounded=False), log)
    done = []
    for k, mode in enumerate(faults):
        before = count_rows(count_sql, (run,))
        if mode is FailureMode.CRASH_AFTER_WRITE:
            # Waits for the crash itself, not for this run's first rows: a shared input
            # topic (exactly-once-kafka's runs write to exactly-once's) may fill batches
            # 0 to 2 with another run's readings, and the crash still lands.
            service.start(env={CRASH_AFTER_BATCH: "2"})
            try:
                rc = service.kill(mode, timeout=JOB_START_TIMEOUT + timeout)
            except subprocess.TimeoutExpired:
                service.hard_kill()
                raise RuntimeError(f"{job} did not reach batch 2 within {JOB_START_TIMEOUT + timeout:.0f}s "
                                   f"of its start; {service.log_tail()}") from None
            if rc != CRASH_EXIT_CODE:
                raise RuntimeError(f"{job} exited with {rc} before its crash after batch 2 "
                                   f"(exit {CRASH_EXIT_CODE}); {service.log_tail()}")
            n = count_rows(count_sql, (run,))
            done.append(f"{mode.value} of batch 2 (exit {rc}) at {n}/{total} rows")
        else:
            service.start()
            wait_for_first_write(service, count_sql, (run,), before)
            step = max(1, (total - before) // (len(faults) + 1 - k))
            try:
                n = wait_for_rows(count_sql, (run,), before + step, timeout, f"{job} to write {step} more rows")
            except TimeoutError:
                service.hard_kill()
                raise RuntimeError(f"{job} made no progress before fault {k + 1}; {service.log_tail()}") from None
            rc = service.kill(mode)
            done.append(f"{mode.value} at {n}/{total} rows (exit {rc})")
        progress(f"{job}: fault {k + 1}/{len(faults)}: {done[-1]}; restarting from its checkpoint")
    run_job(job, run, starting, *extra, *drain)
    return done


# How long a job process may take to write its first rows: its JVM and Spark session
# start. The fault matrix runs three cases side by side on 2 cores, where a start took
# over 90 s once (CI of b46762d); the fault's own wait counts from the first write.
JOB_START_TIMEOUT = 240


def wait_for_first_write(service: JobService, sql: str, params: Sequence, before: int,
                         timeout: float = JOB_START_TIMEOUT) -> None:
    """Wait until a just started job has written past `before` rows; fail at once, with
    its log, when it exits without writing."""
    def written() -> bool:
        if count_rows(sql, params) > before:
            return True
        if not service.alive() and count_rows(sql, params) <= before:
            raise RuntimeError(f"{service.job} exited before writing a row; {service.log_tail()}")
        return False
    try:
        kafka.wait_until(written, timeout, interval=0.5, what=f"{service.job} to start and write")
    except TimeoutError:
        service.hard_kill()
        raise RuntimeError(f"{service.job} wrote nothing within {timeout:.0f}s of its start; "
                           f"{service.log_tail()}") from None


def count_rows(sql: str, params: Sequence) -> int:
    """A COUNT query's result; 0 while its table does not exist yet (a sink that creates
    its table on its first write, like the Debezium JDBC sink on a new cluster)."""
    try:
        return postgres.query(sql, params)[0][0]
    except psycopg.errors.UndefinedTable:
        return 0


def wait_for_rows(sql: str, params: Sequence, at_least: int, timeout: float, what: str) -> int:
    """Poll a COUNT query until it reaches at_least; returns the count."""
    def count() -> int | None:
        n = count_rows(sql, params)
        return n if n >= at_least else None
    return kafka.wait_until(count, timeout, interval=0.5, what=what)


def read_records(start: dict[str, dict[int, int]], end: dict[str, dict[int, int]] | None = None,
                 timeout: float = 60) -> list:
    """Every message of the topics in [start, end) per partition (end: the current end
    offsets), in partition order; assign() without a group commit, so it disturbs nobody."""
    end = end or end_offsets(list(start))
    consumer = kafka.consumer(f"verify-{new_run()}")
    wanted = [(t, p) for t, ps in start.items() for p, o in ps.items() if o < end[t][p]]
    consumer.assign([TopicPartition(t, p, start[t][p]) for t, p in wanted])
    pos = {(t, p): start[t][p] for t, p in wanted}
    out = []

    def done() -> bool:
        for m in consumer.consume(1000, timeout=0.5):
            if m.error() or m.offset() >= end[m.topic()][m.partition()]:
                continue
            out.append(m)
        # The consumer's position, not the last message's offset + 1: a transaction's
        # commit or abort marker, and an aborted transaction's records, take offsets for
        # which no message comes (a topic a transactional job also writes, such as a
        # shared dead-letter topic, can end with a marker).
        for tp in consumer.position([TopicPartition(t, p) for t, p in wanted]):
            pos[(tp.topic, tp.partition)] = max(pos[(tp.topic, tp.partition)], tp.offset)
        return all(pos[tp] >= end[tp[0]][tp[1]] for tp in wanted)

    try:
        if wanted:
            kafka.wait_until(done, timeout, interval=0, what=f"topics read back to {end}")
    finally:
        consumer.close()
    return out

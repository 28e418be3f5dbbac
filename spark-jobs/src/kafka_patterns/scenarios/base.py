"""What scenarios share: the Outcome they report, running catalogue jobs (in this
process or as a separate process that can be killed), offsets and sink queries."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from kafka_patterns import catalogue, clients, credentials, pg, settings
from kafka_patterns.delivery import Delivery
from kafka_patterns.jobs.base import input_topics, output_table, output_topics  # noqa: F401 - for scenarios


@dataclass
class Outcome:
    pattern: str
    jobs: list[str]
    delivery: Delivery
    promise: dict[str, str]
    records_in: int
    records_out: int
    seconds: float = 0.0
    # Pattern-specific checks beyond the counts, e.g. "each partition owned once": True.
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def failures(self) -> list[str]:
        d, p = self.delivery, self.promise
        out = []
        if p.get("lost") == "none" and d.lost:
            out.append(f"{d.lost} lost")
        if p.get("duplicated") == "none" and d.duplicated:
            out.append(f"{d.duplicated} duplicated")
        if p.get("order", "none") != "none" and d.reordered:
            out.append(f"{d.reordered} reordered ({p['order']} order promised)")
        out += [f"check failed: {name}" for name, ok in self.checks.items() if not ok]
        return out

    @property
    def verdict(self) -> str:
        return "FAIL" if self.failures() else "PASS"

    def row(self) -> list:
        d = self.delivery
        return [self.pattern, self.records_in, self.records_out, d.lost, d.duplicated, d.reordered,
                self.verdict, f"{self.seconds:.1f}"]


HEADERS = ["pattern", "in", "out", "lost", "duplicated", "reordered", "verdict", "seconds"]


def promise(job: str) -> dict[str, str]:
    return dict(catalogue.jobs()[job]["promise"])


def new_run() -> str:
    return uuid.uuid4().hex[:12]


def progress(message: str) -> None:
    print(f"    {message}", file=sys.stderr, flush=True)


def end_offsets(topics: Sequence[str]) -> dict[str, dict[int, int]]:
    """Current end of every partition of the topics: {topic: {partition: offset}}."""
    all_topics = catalogue.topics()
    return {t: clients.end_offsets(t, all_topics[t].partitions) for t in topics}


def spark_offsets(offsets: dict[str, dict[int, int]]) -> str:
    """Spark's startingOffsets JSON for a {topic: {partition: offset}} map."""
    return json.dumps({t: {str(p): o for p, o in ps.items()} for t, ps in offsets.items()})


def job_args(job: str, run: str, starting: dict[str, dict[int, int]] | None, *extra: str,
             bounded: bool = True, checkpoint_root: PurePath | None = None) -> list[str]:
    """A checkpoint of this run (under checkpoint_root: where the job runs, default
    here), starting where the run's input begins; bounded adds --available-now
    (process what is there, then stop)."""
    args = [*catalogue.jobs()[job].get("args", []), *(["--available-now"] if bounded else []),
            "--checkpoint", str(checkpoint(job, run, checkpoint_root))]
    if starting is not None:
        args += ["--starting-offsets", spark_offsets(starting)]
    return [*args, *extra]


def checkpoint(job: str, run: str, root: PurePath | None = None) -> Path:
    """The run's checkpoint of the job; root is where the job runs (default: here)."""
    return Path(root or settings.checkpoint_root()) / "scenarios" / run / job


def run_job(job: str, run: str, starting: dict[str, dict[int, int]] | None = None, *extra: str) -> None:
    """Run a catalogue job to completion: in this process (Spark jobs share one
    session), or with KP_JOB_RUNNER=kubernetes as a one-shot copy of its deployed
    SparkApplication, its checkpoint on the application's volume."""
    if settings.job_runner() == "kubernetes":
        from kafka_patterns import kube

        root = kube.checkpoint_root(kube.deployed_spec(kube.connect(), job))
        kube.run_once(job, job_args(job, run, starting, *extra, checkpoint_root=root))
        return
    module = importlib.import_module(catalogue.jobs()[job]["module"])
    with credentials.as_user(job):
        rc = module.main(job_args(job, run, starting, *extra))
    if rc:
        raise RuntimeError(f"job {job} exited with {rc}")


def spawn_job(job: str, args: Sequence[str], log: Path | None = None,
              env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start a catalogue job as its own process group (so a kill takes its JVM too)."""
    module = catalogue.jobs()[job]["module"]
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    return subprocess.Popen([sys.executable, "-m", module, *args], stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "KP_KAFKA_USER": job, **(env or {})})


def hard_kill(proc: subprocess.Popen) -> None:
    """SIGKILL the job's whole process group: no shutdown hooks, like a crashed pod."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def run_with_kills(job: str, run: str, starting: dict[str, dict[int, int]], kills: int, count_sql: str,
                   total: int, *extra: str, timeout: float = 90, drain: Sequence[str] = ()) -> list[str]:
    """Run a job as its own process and kill it `kills` times mid-stream, restarting it
    from its checkpoint each time, then drain it bounded. The first kill is the worst
    case, a crash right after a micro-batch's sink write and before its checkpoint
    commit (KP_CRASH_AFTER_BATCH); the others are SIGKILLs from outside once the sink
    has grown. Returns what each kill was. count_sql counts the run's sink rows; `drain`
    adds options for the final bounded run only (e.g. bigger micro-batches)."""
    log = checkpoint(job, run).parent / f"{job}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    kills_done = []
    for k in range(kills):
        before = pg.query(count_sql, (run,))[0][0]
        if k == 0:
            proc = spawn_job(job, job_args(job, run, starting, *extra, bounded=False), log,
                             env={"KP_CRASH_AFTER_BATCH": "2"})
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                hard_kill(proc)
                raise RuntimeError(f"{job} did not reach batch 2 within {timeout:.0f}s; its log: {log}") from None
            hard_kill(proc)  # the crashed Python leaves its JVM behind, still in the group
            n = pg.query(count_sql, (run,))[0][0]
            kills_done.append(f"crash after sink write of batch 2 (exit {rc}) at {n}/{total} rows")
        else:
            proc = spawn_job(job, job_args(job, run, starting, *extra, bounded=False), log)
            step = max(1, (total - before) // (kills + 1 - k))
            try:
                n = wait_for_rows(count_sql, (run,), before + step, timeout, f"{job} to write {step} more rows")
            except TimeoutError:
                hard_kill(proc)
                raise RuntimeError(f"{job} made no progress before kill {k + 1}; its log: {log}") from None
            hard_kill(proc)
            kills_done.append(f"SIGKILL at {n}/{total} rows")
        progress(f"{job}: kill {k + 1}/{kills}: {kills_done[-1]}; restarting from its checkpoint")
    run_job(job, run, starting, *extra, *drain)
    return kills_done


def wait_for_rows(sql: str, params: Sequence, at_least: int, timeout: float, what: str) -> int:
    """Poll a COUNT query until it reaches at_least; returns the count."""
    def count() -> int | None:
        n = pg.query(sql, params)[0][0]
        return n if n >= at_least else None
    return clients.wait_until(count, timeout, interval=0.5, what=what)


def timed(fn):
    """Decorator: fill Outcome.seconds with the wall time of run()."""
    def wrapper(*args, **kwargs) -> Outcome:
        t0 = time.monotonic()
        outcome = fn(*args, **kwargs)
        outcome.seconds = time.monotonic() - t0
        return outcome
    wrapper.__doc__ = fn.__doc__
    return wrapper

"""What scenarios share: the Outcome they report against the catalogue's promise, the
shapes of run shared by several patterns, and the runner kit (pattern_harness.job_runs)
and catalogue accessors by job name under one name, `base`."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import readings_to_postgres
from pattern_harness import generator
from pattern_harness.delivery import Delivery, Order, account
from pattern_harness.job_processes import FailureMode, JobService, stop_all  # noqa: F401 - the scenarios' kit
from pattern_harness.job_runs import (  # noqa: F401 - the scenarios' kit
    RESTARTED_FAULTS,
    checkpoint,
    committed_past,
    committed_total,
    end_offsets,
    group_caught_up,
    job_args,
    job_log,
    job_output,
    new_run,
    progress,
    read_committed,
    read_records,
    run_job,
    run_with_faults,
    seed_group,
    spark_offsets,
    spawn_job,
    unsupported,
    wait_for_rows,
)


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
    # The faults injected, each "<failure mode> at <where>" (services.FailureMode values).
    faults: list[str] = field(default_factory=list)

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


def fault_check(requested: Sequence[FailureMode], injected: Sequence[str]) -> dict[str, bool]:
    """The check that each requested fault was injected, in order (a fault run that
    injected nothing would pass for nothing); no check for a fault-free run."""
    if not requested:
        return {}
    landed = len(injected) == len(requested) and all(
        i.startswith(f.value) for f, i in zip(requested, injected, strict=True))
    return {f"injected mid-stream: {', '.join(f.value for f in requested)}": landed}


HEADERS = ["pattern", "in", "out", "lost", "duplicated", "reordered", "verdict", "seconds"]


def promise(job: str) -> dict[str, str]:
    return dict(catalogue.jobs()[job]["promise"])


def input_topics(job: str) -> list[str]:
    return list(catalogue.job(job).inputs)


def output_topics(job: str) -> list[str]:
    return list(catalogue.job(job).output_topics)


def output_table(job: str) -> str:
    """The job's PostgreSQL sink table (catalogue output postgres:<table>)."""
    return catalogue.job(job).table


def timed(fn):
    """Decorator: fill Outcome.seconds with the wall time of run()."""
    @functools.wraps(fn)  # keeps run()'s signature: callers pick the options it takes
    def wrapper(*args, **kwargs) -> Outcome:
        t0 = time.monotonic()
        outcome = fn(*args, **kwargs)
        outcome.seconds = time.monotonic() - t0
        return outcome
    return wrapper


def produce_run_and_account(key: str, job: str, records: int, order: Order) -> Outcome:
    """A readings -> PostgreSQL job (one-to-one, total-order): produce to its input, run
    it bounded, account its sink table in the order it promises."""
    topic, table = input_topics(job)[0], output_table(job)
    run_id = new_run()
    starting = end_offsets([topic])
    progress(f"{key}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    progress(f"{key}: running job {job} (Spark, available-now)")
    run_job(job, run_id, starting)
    received = postgres.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))
    d = account(produced.acked, [tuple(r) for r in received], order=order)
    return Outcome(key, [job], d, promise(job), records_in=len(produced.acked), records_out=len(received))


# Small micro-batches in killed runs, so that kills land between many writes and checkpoint commits.
KILLED_RUN_BATCH = "200"


def unique_keys(table: str) -> list[list[str]]:
    """The column lists of the table's unique indexes (the primary key included)."""
    rows = postgres.query("""SELECT array_agg(a.attname ORDER BY a.attnum) FROM pg_index i
                       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                       WHERE i.indrelid = %s::regclass AND i.indisunique GROUP BY i.indexrelid""", (table,))
    return sorted(list(r[0]) for r in rows)


def faulted_job_run(key: str, job: str, records: int, faults: Sequence[FailureMode]) -> Outcome:
    """A readings -> PostgreSQL delivery job (at-least-once, exactly-once) run as a
    process with `faults` injected mid-stream (runner.run_with_faults), then accounted
    with no unique key on its table that could hide a duplicate."""
    topic, table = input_topics(job)[0], output_table(job)
    run_id = new_run()
    starting = end_offsets([topic])
    progress(f"{key}: producing {records} readings to {topic} (acks=all, idempotent)")
    produced = generator.produce(topic, records, run=run_id)
    count_sql = f"SELECT count(*) FROM {table} WHERE run = %s"
    progress(f"{key}: running {job} as a process, faults mid-stream: {', '.join(f.value for f in faults)}")
    readings_to_postgres.ensure_table(table)
    # The final drain takes bigger micro-batches: the topic is shared, and what other
    # runs produced meanwhile is in this run's range too.
    injected = run_with_faults(job, run_id, starting, faults, count_sql, records,
                               "--max-offsets-per-trigger", KILLED_RUN_BATCH, "--trigger-seconds", "0.2",
                               drain=("--max-offsets-per-trigger", "5000"))
    received = postgres.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))
    d = account(produced.acked, [tuple(r) for r in received], order="none")
    checks = {**fault_check(faults, injected),
              "no unique key on the sink that would hide duplicates": unique_keys(table) == [["id"]]}
    if FailureMode.CRASH_AFTER_WRITE in faults and promise(job)["duplicated"] == "counted":
        # Proof the crash landed between a write and its commit: that batch came again.
        checks["the batch written before the crash was written again (counted duplicates)"] = d.duplicated > 0
    return Outcome(key, [job], d, promise(job), len(produced.acked), len(received), checks=checks,
                   notes=[f"{job}: {'; '.join(injected)}"], faults=injected)

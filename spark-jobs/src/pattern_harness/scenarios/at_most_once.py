"""fire-and-forget / at-most-once: acks=0 producer, commit-before-process consumer
that crashes once between a commit and the processing. Measured: zero duplicates;
the batch lost to the crash is counted (the promise allows it). With `faults`, the
restarted consumer is also SIGKILLed or stopped while it processes, and restarted."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import at_most_once
from pattern_harness import generator
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 3_000, "crash_after_commit": 2}


@base.timed
def run(records: int = 5_000, crash_after_commit: int = 3,
        faults: Sequence[base.FailureMode] = ()) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    group = f"{job}-{run_id}"  # a job's groups carry its name (its ACL)
    base.seed_group(group, topic, base.end_offsets([topic])[topic])
    base.progress(f"{KEY}: fire-and-forget: {records} readings with acks=0 to {topic}")
    produced = generator.produce(topic, records, run=run_id, producer_config={"acks": "0", "enable.idempotence": False})
    postgres.ensure(at_most_once.DDL, table=table)
    args = ["--group", group, "--instance-id", group, "--batch", "250", "--max-idle-seconds", "3"]
    crashed = base.spawn_job(job, args, env={"KP_CRASH_AFTER_COMMIT": str(crash_after_commit)})
    rc = crashed.wait(timeout=90)
    if crash_after_commit:
        base.progress(f"{KEY}: consumer crashed after commit {crash_after_commit}, before processing (exit {rc}); "
                      "restarting from the committed offsets")
    count_sql = f"SELECT count(*) FROM {table} WHERE run = %s"
    injected = []
    for k, mode in enumerate(faults):
        before = postgres.query(count_sql, (run_id,))[0][0]
        proc = base.spawn_job(job, [*args, "--batch", "50", "--work-seconds", "0.1"])
        try:
            n = base.wait_for_rows(count_sql, (run_id,), before + 50, 60, f"{job} to process more")
            status = proc.kill(mode)
        finally:
            proc.hard_kill()
        injected.append(f"{mode.value} while processing at {n} rows (exit {status})")
        base.progress(f"{KEY}: fault {k + 1}/{len(faults)}: {injected[-1]}; restarting")
    base.spawn_job(job, args).wait(timeout=120)
    received = [tuple(r) for r in postgres.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id",
                                           (run_id,))]
    # acks=0: every send "succeeds" locally; what was sent is what the producer handed over.
    d = account(produced.acked, received, order="per-key")
    checks = {"no record delivered twice": d.duplicated == 0}
    if crash_after_commit:  # 0: no crash injected (the bad-input suite)
        checks["the consumer crashed once between commit and processing"] = rc == 137
    checks.update(base.fault_check(faults, injected))
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(produced.acked), len(received), checks=checks,
                        faults=injected,
                        notes=[f"{d.lost} records lost to the crash after commit {crash_after_commit} (at-most-once)"])

"""exactly-once (Kafka transactions): the transactional copier fails mid-stream, once
per fault, and a copier with the same transactional.id carries on; a read_committed
reader of the output sees every input record exactly once, in per-key order.

Faults: sigkill and clean-stop (then a restart), and pause: the copier is frozen
mid-stream while a successor with the same transactional.id and group instance id
takes over, then thawed. The thawed zombie must be fenced (its producer epoch and its
static membership are stale) and exit without committing anything: Kafka's zombie
fencing, the reason transactional ids exist."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence

from confluent_kafka import TopicPartition

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from pattern_harness import generator
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP, base.FailureMode.PAUSE)
FAULT_RUN = {"records": 3_000}


def fence_a_zombie(zombie: base.JobService, args: list[str],
                   committed_past: Callable[[base.JobService], int]) -> tuple[base.JobService, int | None]:
    """Freeze `zombie`, start a successor with the same ids, and thaw the zombie once the
    successor has committed past it. Returns the successor and the zombie's exit status
    (None: it was still running 60 s after the thaw, and is SIGKILLed)."""
    zombie.pause()
    successor = base.spawn_job(JOBS[0], args, zombie.log)
    try:
        committed_past(successor)
    except BaseException:
        successor.hard_kill()
        raise
    finally:
        zombie.resume()
    try:
        return successor, zombie.wait(60)
    except subprocess.TimeoutExpired:
        zombie.hard_kill()
        return successor, None


@base.timed
def run(records: int = 6_000,
        faults: Sequence[base.FailureMode] = (base.FailureMode.SIGKILL,) * 3) -> base.Outcome:
    job = JOBS[0]
    (source,), (target,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    group = tid = f"{job}-{run_id}"  # the job's group and transactional id carry its name (its ACLs)
    start_in, start_out = base.end_offsets([source])[source], base.end_offsets([target])[target]
    base.progress(f"{KEY}: producing {records} readings to {source}")
    produced = generator.produce(source, records, run=run_id)
    # The group starts at this run's offsets, not at the topic's beginning.
    seed = kafka.consumer(group)
    seed.commit(offsets=[TopicPartition(source, p, o) for p, o in start_in.items()], asynchronous=False)
    seed.close()
    base_total = sum(start_in.values())
    # Static membership: a restarted copier takes its partitions back at once.
    args = ["--group", group, "--transactional-id", tid, "--instance-id", tid, "--batch", "100"]
    log = base.job_log(job, run_id)
    injected: list[str] = []
    zombie_exits: list[int | None] = []  # None: still running after the thaw
    probe = kafka.consumer(group)  # reads the group's committed offsets, never joins it
    proc = None

    def committed() -> int:
        return base.committed_total(probe, group, source) - base_total

    def committed_past(at_least: int, who: base.JobService) -> int:
        return base.committed_past(probe, group, source, base_total, at_least, who)

    try:
        for k, mode in enumerate(faults):
            # The successor first: a copier killed inside a transaction leaves offsets
            # pending in it, and the probe's offset fetch (read_committed asks for stable
            # offsets) waits until the successor's initTransactions aborts it.
            if proc is None or not proc.alive():
                proc = base.spawn_job(job, args, log)
            done = committed()
            n = committed_past(done + (records - done) // (len(faults) + 1 - k), proc)
            if mode is base.FailureMode.PAUSE:
                proc, rc = fence_a_zombie(proc, args, lambda s, n=n: committed_past(n + 100, s))
                injected.append(f"pause at {n}/{records} committed: a successor took over, the thawed zombie "
                                f"exited {rc}")
                zombie_exits.append(rc)
            else:
                rc = proc.kill(mode)
                injected.append(f"{mode.value} at {n}/{records} committed (exit {rc})")
            base.progress(f"{KEY}: fault {k + 1}/{len(faults)}: {injected[-1]}")
        if proc is not None and proc.alive():
            proc.stop()
        proc = base.spawn_job(job, [*args, "--max-idle-seconds", "3"], log)
        proc.wait(timeout=120)
    finally:
        probe.close()
        if proc is not None and proc.alive():
            proc.hard_kill()
    zombie_check = ({"each thawed zombie was fenced and exited with an error":
                     all(rc not in (None, 0) for rc in zombie_exits)} if zombie_exits else {})
    seen = base.read_committed(target, start_out, run_id, records)
    d = account(produced.acked, seen, order="per-key")
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(produced.acked), len(seen),
                        checks={**base.fault_check(faults, injected), **zombie_check}, notes=injected,
                        faults=injected)

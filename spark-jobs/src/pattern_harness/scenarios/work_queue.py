"""push-pull work queue: more worker processes than partitions join one consumer group;
readings stream in; once every worker is busy, partition-owning workers fail one after
another, one per fault (SIGKILLed or stopped).
Measured from PostgreSQL: every produced item processed (lost), items processed twice
(duplicated, allowed and counted: the killed worker's uncommitted batch), per-key order;
checks: no partition owned by two workers at overlapping times, the extra workers idle
until the kill, the killed worker's partitions taken over."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import work_queue as wq
from pattern_harness import generator
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 4_000, "workers": 8, "rate": 400}


def events(group: str) -> list[tuple]:
    return postgres.query(f"SELECT worker, event, kafka_partition, at FROM {wq.ASSIGNMENTS} WHERE grp = %s ORDER BY id",
                    (group,))


def lost_neighbours(acked: set, rows: Sequence[tuple], log: Path, limit: int = 3) -> list[str]:
    """Where the first lost items sat: the partition their key's other items came from
    and the workers that processed the same key's items just before and after (a loss
    at a handover names both sides), and the workers' log lines about dead letters."""
    by_id = {(k, s): (w, p) for k, s, w, p in rows}
    notes = []
    for key, seq in sorted(acked - by_id.keys())[:limit]:
        before = max((s for k, s in by_id if k == key and s < seq), default=None)
        after = min((s for k, s in by_id if k == key and s > seq), default=None)
        side = {name: f"#{s} by {by_id[key, s][0]} (partition {by_id[key, s][1]})"
                for name, s in (("before", before), ("after", after)) if s is not None}
        notes.append(f"lost {key}#{seq}: {side}")
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return notes + [line for line in lines if "dead-lettered" in line or "Error" in line][-5:]


@base.timed
def run(records: int = 6_000, workers: int = 8, rate: float = 1000.0,
        faults: Sequence[base.FailureMode] = (base.FailureMode.SIGKILL,)) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    (topic,), table = base.input_topics(job), base.output_table(job)
    partitions = len(base.end_offsets([topic])[topic])
    run_id = base.new_run()
    group = f"{job}-{run_id}"  # a job's groups carry its name (its ACL)
    postgres.ensure(*wq.DDL, table=table)
    base.seed_group(group, topic, base.end_offsets([topic])[topic])
    log = base.checkpoint(job, run_id).parent / "workers.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    procs = {f"w{i}": base.spawn_job(job, ["--group", group, "--worker-id", f"w{i}", "--batch", "50"], log)
             for i in range(workers)}
    deaths: dict[str, datetime] = {}
    notes: list[str] = []
    try:
        base.progress(f"{KEY}: {workers} workers joining group {group} on {topic} ({partitions} partitions)")

        def settled():
            if dead := [w for w, proc in procs.items() if not proc.alive()]:
                raise RuntimeError(f"workers {dead} exited while joining; {procs[dead[0]].log_tail()}")
            held = wq.owners_at(events(group), deaths, datetime.now(UTC))
            owned = sorted(p for ps in held.values() for p in ps)
            return held if len(held) == workers and owned == list(range(partitions)) else None
        before = kafka.wait_until(settled, 60, what=f"{workers} workers to join and share {partitions} partitions")
        idle_before = sorted(w for w, ps in before.items() if not ps)
        base.progress(f"{KEY}: assignment {dict(sorted((w, sorted(ps)) for w, ps in before.items()))}")

        produced: list = []
        producer = threading.Thread(target=lambda: produced.append(generator.produce(topic, records, rate=rate,
                                                                                     run=run_id)))
        base.progress(f"{KEY}: producing {records} work items at {rate:.0f}/s")
        producer.start()
        done_sql = f"SELECT count(*) FROM {table} WHERE grp = %s"
        victims, injected, first_fault = [], [], None
        for k, mode in enumerate(faults):
            n = base.wait_for_rows(done_sql, (group,), records * (k + 1) // (len(faults) + 2), 60,
                                   "workers to make progress")
            held = wq.owners_at(events(group), deaths, datetime.now(UTC))
            victim = next(w for w, ps in sorted(held.items()) if ps and w not in deaths)
            # A clean stop returns after the worker left the group, by when an idle worker
            # may have taken its partition: "all alive" ends when the fault starts.
            first_fault = first_fault or datetime.now(UTC)
            rc = procs[victim].kill(mode)
            deaths[victim] = datetime.now(UTC)
            victims.append((victim, sorted(held[victim])))
            injected.append(f"{mode.value} of {victim} (owned partitions {sorted(held[victim])}) "
                            f"at {n}/{records} processed (exit {rc})")
            base.progress(f"{KEY}: {injected[-1]}")
        producer.join()
        (out,) = produced
        acked = set(out.acked)
        ends = base.end_offsets([topic])
        base.progress(f"{KEY}: waiting for all {len(acked)} items to be processed")

        def all_done():
            # Every item written, and the group's offsets at the end (malformed items
            # are dead-lettered, never written).
            seen = postgres.query(f"SELECT count(DISTINCT (record_key, record_seq)) FROM {table} WHERE grp = %s",
                            (group,))[0][0]
            return seen >= len(acked) and base.group_caught_up(group, ends)
        try:
            kafka.wait_until(all_done, 90, what="every work item to be processed")
        except TimeoutError as e:
            notes.append(str(e))
        after = wq.owners_at(events(group), deaths, datetime.now(UTC))
    finally:
        # Ownership is judged up to here: the shutdown's own rebalances (SIGTERM can land
        # inside a rebalance callback) are not part of the run.
        stop_at = datetime.now(UTC)
        base.stop_all(procs.values())
    rows = postgres.query(f"SELECT record_key, record_seq, worker, kafka_partition FROM {table} "
                    "WHERE grp = %s ORDER BY id", (group,))
    received = [(k, s) for k, s, _, _ in rows]
    d = account(acked, received, order="per-key")
    if d.lost:
        notes += lost_neighbours(acked, rows, log)
    evs = [e for e in events(group) if e[3] < stop_at]
    overlaps = wq.overlapping_owners(wq.ownership_intervals(evs, deaths, stop_at))
    notes += overlaps[:3]
    per_worker: dict[str, int] = {}
    for _, _, w, _ in rows:
        per_worker[w] = per_worker.get(w, 0) + 1
    moved = all(any(p in ps for w, ps in after.items()) for _, parts in victims for p in parts)
    idle_worked_later = [w for w in idle_before if after.get(w)]
    notes.append(f"records per worker {dict(sorted(per_worker.items()))}; idle before the kill {idle_before}; "
                 f"failed {[v for v, _ in victims]}")
    checks = {
        "every partition owned by exactly one worker at a time": not overlaps,
        f"{max(0, workers - partitions)} extra workers idle while all were alive":
            len(idle_before) == max(0, workers - partitions),
        "idle workers processed nothing while all were alive": True,
    }
    checks.update(base.fault_check(faults, injected))
    if faults:
        checks["the failed workers' partitions moved to survivors"] = moved
        checks["a previously idle worker took over partitions"] = bool(idle_worked_later) or workers <= partitions
    early = postgres.query(f"SELECT count(*) FROM {table} WHERE grp = %s AND worker = ANY(%s) AND processed_at < %s",
                     (group, idle_before, first_fault or stop_at))[0][0]
    checks["idle workers processed nothing while all were alive"] = early == 0
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(acked), len(received), checks=checks,
                        notes=[*injected, *notes], faults=injected)

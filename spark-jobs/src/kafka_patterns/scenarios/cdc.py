"""CDC through Kafka Connect: rows of public.stations are inserted, some updated, some
deleted; Debezium captures the changes, cdc-transform (Spark, bounded) transforms
them, the Debezium JDBC sink applies them to stations_replica. Measured: the replica
against the source's final state transformed by the same rule: rows missing (lost),
rows that should be gone (deleted rows left behind) and rows whose contents differ.
With `faults`, cdc-transform runs as a process SIGKILLed or stopped mid-stream and
restarted from its checkpoint: the events it re-transforms are counted as duplicates
in its output topic (the replica's upserts absorb them)."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Sequence

import psycopg
from confluent_kafka import TopicPartition

from kafka_patterns import catalogue, clients, connect, pg
from kafka_patterns.delivery import account
from kafka_patterns.jobs import cdc_transform as job_module
from kafka_patterns.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
REPLICA = "stations_replica"
# What the faults tier's matrix may inject (its Kafka sink has no foreachBatch to crash
# after a write in), and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"rows": 200, "updates": 60, "deletes": 40}


def change_events(topic: str, starting: dict[int, int], run_id: str, expected: int, timeout: float) -> int:
    """Count the run's change events Debezium wrote since `starting` (waits for `expected`)."""
    consumer = clients.consumer(f"cdc-probe-{run_id}")
    consumer.assign([TopicPartition(topic, p, o) for p, o in starting.items()])
    seen = 0

    def poll() -> bool:
        nonlocal seen
        for m in consumer.consume(500, timeout=0.5):
            if m.error() or m.value() is None:
                continue
            e = json.loads(m.value())
            if run_id in ((e.get("after") or {}).get("run"), (e.get("before") or {}).get("run")):
                seen += 1
        return seen >= expected
    try:
        clients.wait_until(poll, timeout, interval=0, what=f"{expected} change events of run {run_id} in {topic}")
    except TimeoutError:
        pass
    finally:
        consumer.close()
    return seen


def replica_rows(run_id: str) -> dict[int, tuple]:
    try:
        return {r[0]: tuple(r[1:]) for r in pg.query(
            f"SELECT id, name, latitude, longitude, elevation_ft FROM {REPLICA} WHERE run = %s", (run_id,))}
    except psycopg.errors.UndefinedTable:
        return {}


def same(a: tuple, b: tuple) -> bool:
    """Equal rows (floats within rounding of the 2-decimal elevation)."""
    return a[0] == b[0] and all((x is None and y is None) or (x is not None and y is not None and abs(x - y) < 0.011)
                                for x, y in zip(a[1:], b[1:], strict=True))


@base.timed
def run(rows: int = 200, updates: int = 60, deletes: int = 40, seed: int | None = None,
        faults: Sequence[base.FailureMode] = ()) -> base.Outcome:
    job = JOBS[0]
    (src,), (out,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    rng = random.Random(seed)
    pg.ensure(job_module.STATIONS_DDL, "ALTER TABLE stations REPLICA IDENTITY FULL")  # deletes carry the row
    base.progress(f"{KEY}: registering connectors {', '.join(connect.specs())} with Kafka Connect")
    states = connect.ensure_all()
    starting = base.end_offsets([src])
    base.progress(f"{KEY}: {rows} inserts, {updates} updates, {deletes} deletes on public.stations (run {run_id})")
    with pg.connect() as conn:
        ids = [conn.execute("INSERT INTO stations (run, name, latitude, longitude, elevation_m) "
                            "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                            (run_id, f"station {run_id} {i}", round(rng.uniform(-60, 70), 4),
                             round(rng.uniform(-180, 180), 4), round(rng.uniform(0, 3000), 1))).fetchone()[0]
               for i in range(rows)]
    updated, deleted = rng.sample(ids, updates), rng.sample(ids, deletes)
    with pg.connect() as conn:
        for i in updated:
            conn.execute("UPDATE stations SET name = name || ' renamed', elevation_m = elevation_m + 12.5 "
                         "WHERE id = %s", (i,))
    with pg.connect() as conn:
        for i in deleted:
            conn.execute("DELETE FROM stations WHERE id = %s", (i,))
    events = rows + updates + deletes
    seen = change_events(src, starting[src], run_id, events, 60)
    base.progress(f"{KEY}: {seen}/{events} change events captured; running {job} (Spark, available-now)")
    out_start = base.end_offsets([out])[out]
    injected: list[str] = []
    if faults:
        # Small micro-batches so the faults land mid-stream; the replica's rows are the
        # sink's progress.
        replica_count = f"SELECT count(*) FROM {REPLICA} WHERE run = %s"
        injected = base.run_with_faults(job, run_id, starting, faults, replica_count, rows,
                                        "--max-offsets-per-trigger", "20", "--trigger-seconds", "0.2",
                                        drain=("--max-offsets-per-trigger", "5000"))
    else:
        base.run_job(job, run_id, starting)
    written = sum(base.end_offsets([out])[out].values()) - sum(out_start.values())
    expected = {r[0]: job_module.expected_row(*r[1:]) for r in pg.query(
        "SELECT id, name, latitude, longitude, elevation_m FROM stations WHERE run = %s", (run_id,))}
    base.progress(f"{KEY}: waiting for {REPLICA} to hold the {len(expected)} transformed rows")

    def converged():
        got = replica_rows(run_id)
        return got if got.keys() == expected.keys() and all(same(got[k], v) for k, v in expected.items()) else None
    with contextlib.suppress(TimeoutError):
        clients.wait_until(converged, 60, interval=1, what=f"{REPLICA} to match the transformed source")
    got = replica_rows(run_id)
    d = account([(str(i), 0) for i in expected], [(str(i), 0) for i in got], order="none")
    differing = [i for i in expected.keys() & got.keys() if not same(got[i], expected[i])]
    left_behind = [i for i in deleted if i in got]
    return base.Outcome(KEY, JOBS, d, base.promise(job), events, len(got), faults=injected, checks={
        **base.fault_check(faults, injected),
        "connectors RUNNING": all(s == "RUNNING" for s in states.values()),
        f"every change event captured ({events})": seen >= events,
        "deleted rows gone from the replica": not left_behind and d.unacked == 0,
        "replica contents equal the transformed source": not differing,
    }, notes=[f"{seen} change events of this run in {src}, {written} records written to {out} (all runs "
              f"since the start offsets), {len(expected)} rows expected, {len(got)} in {REPLICA}, "
              f"{len(differing)} differing, {len(left_behind)} deleted rows left behind",
              *([f"{job}: {'; '.join(injected)}; {max(0, written - seen)} events transformed twice "
                 "(re-run after the faults, duplicates in the output topic)"] if faults else [])])

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
from dataclasses import dataclass

import psycopg
from confluent_kafka import TopicPartition

from kafka_patterns.clients import connect, kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import cdc_transform as job_module
from pattern_harness.delivery import Delivery, account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
REPLICA = "stations_replica"
# What the faults tier's matrix may inject (its Kafka sink has no foreachBatch to crash
# after a write in), and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"rows": 200, "updates": 60, "deletes": 40}


def change_events(topic: str, starting: dict[int, int], run_id: str, expected: int, timeout: float) -> int:
    """Count the run's change events Debezium wrote since `starting` (waits for `expected`)."""
    consumer = kafka.consumer(f"cdc-probe-{run_id}")
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
        kafka.wait_until(poll, timeout, interval=0, what=f"{expected} change events of run {run_id} in {topic}")
    except TimeoutError:
        pass
    finally:
        consumer.close()
    return seen


def replica_rows(replica: str, run_id: str) -> dict[int, tuple]:
    try:
        return {r[0]: tuple(r[1:]) for r in postgres.query(
            f"SELECT id, name, latitude, longitude, elevation_ft FROM {replica} WHERE run = %s", (run_id,))}
    except psycopg.errors.UndefinedTable:
        return {}


def same(a: tuple, b: tuple) -> bool:
    """Equal rows (floats within rounding of the 2-decimal elevation)."""
    return a[0] == b[0] and all((x is None and y is None) or (x is not None and y is not None and abs(x - y) < 0.011)
                                for x, y in zip(a[1:], b[1:], strict=True))


def change_stations(run_id: str, rows: int, updates: int, deletes: int, seed: int | None) -> tuple[int, list[int]]:
    """Insert `rows` stations of the run, then update and delete some of them, each change
    its own transaction. Returns the number of change events that makes and the ids
    deleted."""
    rng = random.Random(seed)
    if postgres.query("SELECT to_regclass('public.stations')")[0][0] is None:
        raise RuntimeError("no table public.stations, the CDC source, in PostgreSQL: run `make up` (role "
                           "postgresql creates it)")
    base.progress(f"{KEY}: {rows} inserts, {updates} updates, {deletes} deletes on public.stations (run {run_id})")
    with postgres.connect() as conn:
        ids = [conn.execute("INSERT INTO stations (run, name, latitude, longitude, elevation_m) "
                            "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                            (run_id, f"station {run_id} {i}", round(rng.uniform(-60, 70), 4),
                             round(rng.uniform(-180, 180), 4), round(rng.uniform(0, 3000), 1))).fetchone()[0]
               for i in range(rows)]
    updated, deleted = rng.sample(ids, updates), rng.sample(ids, deletes)
    with postgres.connect() as conn:
        for i in updated:
            conn.execute("UPDATE stations SET name = name || ' renamed', elevation_m = elevation_m + 12.5 "
                         "WHERE id = %s", (i,))
    with postgres.connect() as conn:
        for i in deleted:
            conn.execute("DELETE FROM stations WHERE id = %s", (i,))
    return rows + updates + deletes, deleted


@dataclass(frozen=True)
class Replica:
    """The run's rows in the replica against the source's final state, transformed."""

    delivery: Delivery
    expected: int
    got: int
    differing: int
    left_behind: int

    def checks(self) -> dict[str, bool]:
        return {"deleted rows gone from the replica": not self.left_behind and self.delivery.unacked == 0,
                "replica contents equal the transformed source": not self.differing}

    def note(self, replica: str) -> str:
        return (f"{self.expected} rows expected, {self.got} in {replica}, {self.differing} differing, "
                f"{self.left_behind} deleted rows left behind")


def compare_replica(replica: str, run_id: str, deleted: Sequence[int], timeout: float) -> Replica:
    """Wait up to `timeout` for the replica to hold the run's source rows transformed
    (the sink applies what the transform wrote), then account for what it holds."""
    expected = {r[0]: job_module.expected_row(*r[1:]) for r in postgres.query(
        "SELECT id, name, latitude, longitude, elevation_m FROM stations WHERE run = %s", (run_id,))}
    base.progress(f"{KEY}: waiting for {replica} to hold the {len(expected)} transformed rows")

    def converged():
        got = replica_rows(replica, run_id)
        return got if got.keys() == expected.keys() and all(same(got[k], v) for k, v in expected.items()) else None
    with contextlib.suppress(TimeoutError):
        kafka.wait_until(converged, timeout, interval=1, what=f"{replica} to match the transformed source")
    got = replica_rows(replica, run_id)
    d = account([(str(i), 0) for i in expected], [(str(i), 0) for i in got], order="none")
    differing = [i for i in expected.keys() & got.keys() if not same(got[i], expected[i])]
    return Replica(d, len(expected), len(got), len(differing), len([i for i in deleted if i in got]))


@base.timed
def run(rows: int = 200, updates: int = 60, deletes: int = 40, seed: int | None = None,
        faults: Sequence[base.FailureMode] = ()) -> base.Outcome:
    job = JOBS[0]
    (src,), (out,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    base.progress(f"{KEY}: registering connectors {', '.join(connect.specs())} with Kafka Connect")
    states = connect.ensure_all()
    starting = base.end_offsets([src])
    events, deleted = change_stations(run_id, rows, updates, deletes, seed)
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
    replica = compare_replica(REPLICA, run_id, deleted, 60)
    return base.Outcome(KEY, JOBS, replica.delivery, base.promise(job), events, replica.got, faults=injected, checks={
        **base.fault_check(faults, injected),
        "connectors RUNNING": all(s == "RUNNING" for s in states.values()),
        f"every change event captured ({events})": seen >= events,
        **replica.checks(),
    }, notes=[f"{seen} change events of this run in {src}, {written} records written to {out} (all runs "
              f"since the start offsets), {replica.note(REPLICA)}",
              *([f"{job}: {'; '.join(injected)}; {max(0, written - seen)} events transformed twice "
                 "(re-run after the faults, duplicates in the output topic)"] if faults else [])])

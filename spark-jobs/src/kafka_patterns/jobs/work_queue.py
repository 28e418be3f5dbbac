"""push-pull work queue: the partitions of work.queue are shared out among the members
of one consumer group; each worker is a separate process with its own consumer (a real
group member). Kafka's group coordinator gives every partition to exactly one member at
a time; a member that dies is dropped after its session timeout and its partitions are
re-assigned to the survivors; members beyond the partition count get nothing and wait
as hot spares.

Guarantee: at-least-once, per-key order. A worker writes each batch's rows to PostgreSQL
(work_done: group, worker, partition, offset, record id) and only then commits the
batch's offsets; a worker killed between the two leaves its last batch uncommitted, and
the member that inherits the partition processes it again: nothing lost, duplicates
counted. Every assignment and revocation is logged with its time (work_assignments) so
ownership can be checked afterwards.

    python -m kafka_patterns.jobs.work_queue --job work-queue --worker-id W [--group G] [--max-idle-seconds S]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from confluent_kafka import Message

from kafka_patterns.clients import postgres
from kafka_patterns.jobs import base, client
from kafka_patterns.runtime import dead_letters, readings, schema_check

ASSIGNMENTS = "work_assignments"
COLUMNS = ("grp", "worker", "kafka_partition", "kafka_offset", "record_key", "record_seq", "processed_at")
DDL = ("""CREATE TABLE IF NOT EXISTS {table} (
           id BIGSERIAL PRIMARY KEY, grp TEXT NOT NULL, worker TEXT NOT NULL, kafka_partition INT,
           kafka_offset BIGINT, record_key TEXT, record_seq BIGINT, processed_at TIMESTAMPTZ)""",
       "CREATE INDEX IF NOT EXISTS {table}_grp ON {table} (grp)",
       f"""CREATE TABLE IF NOT EXISTS {ASSIGNMENTS} (
           id BIGSERIAL PRIMARY KEY, grp TEXT NOT NULL, worker TEXT NOT NULL,
           event TEXT NOT NULL, kafka_partition INT NOT NULL, at TIMESTAMPTZ NOT NULL)""")


def work_rows(group: str, worker: str, msgs: Iterable[Message], now: datetime,
              check: schema_check.SchemaCheck | None = None) -> tuple[list[tuple], list[tuple[Message, str]]]:
    """The rows a batch of work items produces (the 'work': identify each reading), and
    the malformed items with the reason (for the dead-letter topic, never a crash):
    the reading contract's, or their schema tag's (`check`)."""
    good, bad = readings.split(msgs, check)
    return [(group, worker, m.partition(), m.offset(), r.sensor, r.seq, now) for m, r in good], bad


Span = tuple[str, datetime, datetime]


def ownership_intervals(events: Sequence[tuple[str, str, int, datetime]],
                        ends: dict[str, datetime], default_end: datetime) -> dict[int, list[Span]]:
    """Per partition, the (worker, from, to) spans each worker owned it, from the
    (worker, event 'assign'|'revoke', partition, time) log in time order. A span never
    revoked (the worker was killed, or is still running) ends at ends[worker] (its death)
    or default_end."""
    open_: dict[tuple[str, int], datetime] = {}
    spans: dict[int, list[tuple[str, datetime, datetime]]] = {}
    for worker, event, part, at in events:
        if part < 0:
            continue
        if event == "assign":
            open_.setdefault((worker, part), at)
        elif event == "revoke" and (worker, part) in open_:
            spans.setdefault(part, []).append((worker, open_.pop((worker, part)), at))
    for (worker, part), start in open_.items():
        spans.setdefault(part, []).append((worker, start, ends.get(worker, default_end)))
    return spans


def overlapping_owners(spans: dict[int, list[tuple[str, datetime, datetime]]]) -> list[str]:
    """Partitions that two different workers owned at overlapping times (should be none)."""
    bad = []
    for part, ss in spans.items():
        ss = sorted(ss, key=lambda s: s[1])
        for i, (w1, _, e1) in enumerate(ss):
            for w2, s2, _ in ss[i + 1:]:
                if w2 != w1 and s2 < e1:
                    bad.append(f"partition {part}: {w1} until {e1:%H:%M:%S.%f} and {w2} from {s2:%H:%M:%S.%f}")
    return bad


def owners_at(events: Sequence[tuple[str, str, int, datetime]], ends: dict[str, datetime],
              at: datetime) -> dict[str, set[int]]:
    """Which partitions each live worker held at a moment (dead workers hold nothing)."""
    held: dict[str, set[int]] = {}
    for worker, event, part, t in events:
        if t > at:
            break
        held.setdefault(worker, set())
        if part < 0:
            continue
        if event == "assign":
            held[worker].add(part)
        elif event == "revoke":
            held[worker].discard(part)
    return {w: ps for w, ps in held.items() if w not in ends or ends[w] > at}


def _now() -> datetime:
    return datetime.now(UTC)


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--worker-id", required=True, help="this member's name in work_done")
    p.add_argument("--session-timeout-ms", type=int, default=6000,
                   help="how soon a dead member is dropped and its partitions move (broker minimum: 6000)")
    args = p.parse_args(argv)
    postgres.ensure(*DDL, table=job.table)
    (topic,) = job.inputs
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic)
    check = schema_check.for_topic(topic)

    def log_events(event: str, partitions) -> None:
        # One row per partition; an empty assignment is logged as partition -1 (joined, idle).
        parts = [tp.partition for tp in partitions] or [-1]
        with postgres.connect() as conn:
            postgres.insert_rows(conn, ASSIGNMENTS, ("grp", "worker", "event", "kafka_partition", "at"),
                           [(args.group, args.worker_id, event, part, _now()) for part in parts])

    consumer = client.group_consumer(args, **{"session.timeout.ms": args.session_timeout_ms,
                                              "heartbeat.interval.ms": 1000})
    consumer.subscribe([topic], on_assign=lambda _c, ps: log_events("assign", ps),
                       on_revoke=lambda _c, ps: log_events("revoke", ps),
                       on_lost=lambda _c, ps: log_events("revoke", ps))

    def work(msgs: list[Message]) -> None:
        rows, bad = work_rows(args.group, args.worker_id, msgs, _now(), check)
        for m, reason in bad:
            letters.send(m, reason)
        letters.flush()
        with postgres.connect() as conn:
            postgres.insert_rows(conn, job.table, COLUMNS, rows)
        consumer.commit(asynchronous=False)  # after the write and the letters: at-least-once

    t0 = time.monotonic()
    try:
        client.poll_loop(consumer, work, args.batch, args.max_idle_seconds)
    finally:
        consumer.close()
        print(f"{args.worker_id}: stopped after {time.monotonic() - t0:.1f}s, "
              f"{letters.sent} malformed items dead-lettered",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

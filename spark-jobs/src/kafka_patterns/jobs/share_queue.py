"""share-group queue (Kafka 4.x share groups, KIP-932): consumers of one share group
all fetch from every partition of share.queue, and the broker hands each record to
one of them at a time (it is *acquired* under a lock), so a topic with 2 partitions
is worked on by as many consumers as there are. Each consumer acknowledges every
record explicitly: ACCEPT once it is written to PostgreSQL (share_done), REJECT for a
malformed one (archived, never redelivered). A record whose consumer dies before
acknowledging it is released when the lock or the member's session expires and is
delivered again (its delivery count goes up).

Guarantee: at-least-once (nothing lost; a redelivery after a crash is a counted
duplicate), no order across records.

    python -m kafka_patterns.jobs.share_queue --job share-queue --consumer-id C [--group G] [--max-idle-seconds S]

The share group reads from where the group's share.auto.offset.reset puts it (a group
config, `latest` by default); the scenario sets it per group (see configure_group).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime

from confluent_kafka import AcknowledgeType, Message, ShareConsumer
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.jobs import base, client
from kafka_patterns.runtime import dead_letters, readings

COLUMNS = ("grp", "consumer", "kafka_partition", "kafka_offset", "record_run", "record_key", "record_seq",
           "delivery_count", "processed_at")
DDL = ("""CREATE TABLE IF NOT EXISTS {table} (
           id BIGSERIAL PRIMARY KEY, grp TEXT NOT NULL, consumer TEXT NOT NULL, kafka_partition INT,
           kafka_offset BIGINT, record_run TEXT, record_key TEXT, record_seq BIGINT, delivery_count INT,
           processed_at TIMESTAMPTZ)""",
       "CREATE INDEX IF NOT EXISTS {table}_grp ON {table} (grp)")


def decide(msgs: Iterable[Message], group: str, consumer: str, now: datetime
           ) -> tuple[list[tuple], list[tuple[Message, AcknowledgeType]], list[tuple[Message, str]]]:
    """The rows to write, the acknowledgement of each record and the malformed records
    with their reason: ACCEPT a reading, REJECT a malformed value (it would fail again on
    every redelivery) once it is dead-lettered."""
    rows, acks, bad = [], [], []
    for m in msgs:
        r, reason = readings.parse(m.value())
        if r is None:
            acks.append((m, AcknowledgeType.REJECT))
            bad.append((m, reason))
        else:
            rows.append((group, consumer, m.partition(), m.offset(), r.run, r.sensor, r.seq, m.delivery_count(), now))
            acks.append((m, AcknowledgeType.ACCEPT))
    return rows, acks, bad


def configure_group(group: str, reset: str = "earliest", lock_ms: int | None = None) -> None:
    """Where a new share group starts: share.auto.offset.reset (latest | earliest |
    by_duration:<ISO-8601 duration>), a group config set through the admin API; and
    optionally share.record.lock.duration.ms, how long a record stays acquired by a
    member that does not acknowledge it (a dead one) before it is delivered again (the
    brokers bound it: group.share.min.record.lock.duration.ms, 15 s by default)."""
    configs = {"share.auto.offset.reset": reset}
    if lock_ms is not None:
        configs["share.record.lock.duration.ms"] = str(lock_ms)
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    res = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = kafka.admin()  # kept referenced until the futures resolve
    for future in admin.incremental_alter_configs([res]).values():
        future.result(timeout=30)


def share_consumer(group: str) -> ShareConsumer:
    return ShareConsumer({**kafka.base_config(), "group.id": group, "share.acknowledgement.mode": "explicit"})


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--consumer-id", required=True, help="this consumer's name in share_done")
    args = p.parse_args(argv)
    postgres.ensure(*DDL, table=job.table)
    (topic,) = job.inputs
    consumer = share_consumer(args.group)
    consumer.subscribe([topic])

    accepted = rejected = 0
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic)
    idle_since = time.monotonic()
    # SIGTERM stops after the batch in hand; close() then leaves the group.
    with base.stopping_on_sigterm() as stopping:
        try:
            while not stopping.is_set() and (args.max_idle_seconds is None
                                             or time.monotonic() - idle_since < args.max_idle_seconds):
                msgs = consumer.poll(0.5)
                errors = [m.error() for m in msgs if m.error()]
                if any(not e.retriable() for e in errors):
                    raise RuntimeError(f"share consume error: {errors}")
                msgs = [m for m in msgs if not m.error()]
                if not msgs:
                    continue
                idle_since = time.monotonic()
                rows, acks, bad = decide(msgs, args.group, args.consumer_id, datetime.now(UTC))
                for m, reason in bad:
                    letters.send(m, reason)
                letters.flush()
                with postgres.connect() as conn:
                    postgres.insert_rows(conn, job.table, COLUMNS, rows)
                for m, ack in acks:  # after the write: a crash before this redelivers, never loses
                    consumer.acknowledge(m, ack)
                accepted += len(rows)
                rejected += len(acks) - len(rows)
                failed = {tp: e for tp, e in consumer.commit_sync().items() if e is not None}
                if failed:
                    print(f"{args.consumer_id}: acknowledgement commit failed: {failed}", file=sys.stderr)
        finally:
            consumer.close()
            print(f"{args.consumer_id}: {accepted} accepted, {rejected} rejected (malformed, dead-lettered)",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the client (confluent-kafka) jobs share: their command line and a poll loop
that stops after a stretch of idleness when asked (bounded runs for tests/demo), or
cleanly on SIGTERM."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from confluent_kafka import Consumer, Message, Producer

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base


def parser(job: catalogue.Job, doc: str | None) -> base.JobParser:
    """The options every client job takes; a job adds its own before parse_args."""
    p = base.JobParser(job, doc)
    p.add_argument("--group", default=job.name, help="consumer group id (default: the job name)")
    p.add_argument("--max-idle-seconds", type=float, default=None,
                   help="stop after this long without records (default: run until stopped)")
    p.add_argument("--batch", type=int, default=200, help="records per poll")
    p.add_argument("--instance-id", default=None,
                   help="static group membership: a restarted member with the same id gets its partitions "
                        "back at once instead of after the dead member's session timeout")
    return p


def group_consumer(args: argparse.Namespace, **overrides) -> Consumer:
    """A consumer in args.group, a static member when --instance-id is given; the
    caller's overrides win (a job's own session timeout over the static default)."""
    static = {"group.instance.id": args.instance_id, "session.timeout.ms": 15000} if args.instance_id else {}
    return kafka.consumer(args.group, **{**static, **overrides})


def poll_loop(consumer: Consumer, handle: Callable[[list[Message]], None], batch: int,
              max_idle: float | None) -> None:
    """Batches of up to `batch` records, as they arrive (clients.consume_ready: a lone
    record does not wait for a batch to fill), into handle() until SIGTERM or `max_idle`
    seconds without records; non-retriable errors raise. Idleness counts only once the
    consumer has partitions (joining a group takes a rebalance first)."""
    with base.stopping_on_sigterm() as stopping:
        idle_since = time.monotonic()
        while not stopping.is_set():
            msgs = kafka.consume_ready(consumer, batch, 0.5)
            for m in msgs:
                if m.error() and not m.error().retriable():
                    raise RuntimeError(f"consume error: {m.error()}")
            msgs = [m for m in msgs if not m.error()]
            if msgs or not consumer.assignment():
                if msgs:
                    handle(msgs)
                idle_since = time.monotonic()
            elif max_idle is not None and time.monotonic() - idle_since >= max_idle:
                return


def consume_transform_produce(args: argparse.Namespace, source: str,
                              outputs: Callable[[Message], tuple[str, bytes, list | None]]) -> None:
    """Read `source` read_committed as a member of args.group and, for each polled batch,
    produce every record's (topic, value, headers) — same key — and commit the batch's
    input offsets in ONE Kafka transaction (transactional.id = args.transactional_id).
    A restarted instance fences the previous one and aborts its open transaction, so a
    read_committed reader sees each input's output exactly once."""
    producer = transactional_producer(args)

    def write(msgs: list[Message]) -> None:
        for m in msgs:
            topic, value, headers = outputs(m)
            producer.produce(topic, key=m.key(), value=value, headers=headers)

    in_transactions(args, source, producer, write)


def transactional_producer(args: argparse.Namespace) -> Producer:
    """The producer of args.transactional_id, initialised: init_transactions() fences a
    previous instance with the same id and aborts its open transaction (and returns once
    that abort is written), so what it had not committed never shows to read_committed."""
    producer = kafka.producer(**{"transactional.id": args.transactional_id, **kafka.RESEND_AS_RECEIVED})
    producer.init_transactions()
    return producer


def in_transactions(args: argparse.Namespace, source: str, producer: Producer,
                    write: Callable[[list[Message]], None]) -> None:
    """The read-process-write loop: read `source` read_committed as a member of
    args.group; per polled batch, whatever write(batch) produces with `producer` (a
    transactional_producer) and the batch's input offsets are committed in ONE
    transaction. A failed transaction raises out of the loop: the job stops, and its
    restart fences what is left of it."""
    consumer = group_consumer(args, **{"isolation.level": "read_committed"})
    consumer.subscribe([source])

    def in_one_transaction(msgs: list[Message]) -> None:
        producer.begin_transaction()
        write(msgs)
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata())
        producer.commit_transaction()

    try:
        poll_loop(consumer, in_one_transaction, args.batch, args.max_idle_seconds)
    finally:
        consumer.close()

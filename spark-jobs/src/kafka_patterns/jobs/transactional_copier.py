"""exactly-once (Kafka transactions): copy delivery.exactly-once.in to
delivery.exactly-once.out. Each polled batch is produced and its input offsets are
committed in ONE Kafka transaction (send_offsets_to_transaction); the input is read
read_committed. A copier killed mid-transaction is fenced when it restarts with the
same transactional.id and its open transaction aborted, so a read_committed reader of
the output sees every input record exactly once, in per-key order.

    python -m kafka_patterns.jobs.transactional_copier [--transactional-id ID] [--group G]
"""

from __future__ import annotations

import sys

from confluent_kafka import Message

from kafka_patterns import clients
from kafka_patterns.jobs import base, client

JOB = "exactly-once-copier"


def copy_value(value: bytes) -> bytes:
    """The copy is verbatim: the pattern is about delivery, not transformation."""
    return value


def main(argv: list[str] | None = None) -> int:
    p = client.parser(JOB, __doc__)
    p.add_argument("--transactional-id", default=JOB)
    args = p.parse_args(argv)
    (source,), (target,) = base.input_topics(JOB), base.output_topics(JOB)
    consumer = client.group_consumer(args, **{"isolation.level": "read_committed"})
    producer = clients.producer(**{"transactional.id": args.transactional_id})
    producer.init_transactions()  # fences a previous instance and aborts its open transaction
    consumer.subscribe([source])

    def copy(msgs: list[Message]) -> None:
        producer.begin_transaction()
        for m in msgs:
            producer.produce(target, key=m.key(), value=copy_value(m.value()), headers=m.headers())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata())
        producer.commit_transaction()

    try:
        client.poll_loop(consumer, copy, args.batch, args.max_idle_seconds)
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

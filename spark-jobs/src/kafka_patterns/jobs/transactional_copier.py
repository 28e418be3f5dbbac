"""exactly-once (Kafka transactions): copy delivery.exactly-once.in to
delivery.exactly-once.out. Each polled batch is produced and its input offsets are
committed in ONE Kafka transaction (send_offsets_to_transaction); the input is read
read_committed. A copier killed mid-transaction is fenced when it restarts with the
same transactional.id and its open transaction aborted, so a read_committed reader of
the output sees every input record exactly once, in per-key order.

    python -m kafka_patterns.jobs.transactional_copier --job exactly-once-copier [--transactional-id ID] [--group G]
"""

from __future__ import annotations

import sys

from kafka_patterns.jobs import base, client


def copy_value(value: bytes) -> bytes:
    """The copy is verbatim: the pattern is about delivery, not transformation."""
    return value


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--transactional-id", default=job.name)
    args = p.parse_args(argv)
    (source,), (target,) = job.inputs, job.output_topics
    client.consume_transform_produce(args, source, lambda m: (target, copy_value(m.value()), m.headers()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

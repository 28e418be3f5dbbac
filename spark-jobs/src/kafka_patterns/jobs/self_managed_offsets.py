"""self-managed offsets: the consumer keeps its position in PostgreSQL, not in Kafka.
Each polled batch updates the per-sensor state (count, temperature sum, last seq) AND
the next offset of each partition in ONE transaction; on start it seeks to the stored
offsets. A crash anywhere leaves state and offsets consistent: no record applied
twice, none skipped.

    python -m kafka_patterns.jobs.self_managed_offsets --consumer NAME [--from-offsets JSON]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

from confluent_kafka import Message, TopicPartition

from kafka_patterns import catalogue, clients, pg, readings
from kafka_patterns.jobs import base, client

JOB = "self-managed-offsets"
TABLE = base.output_table(JOB)
DDL = (f"""CREATE TABLE IF NOT EXISTS {TABLE} (consumer TEXT, sensor TEXT, n BIGINT, temperature_sum DOUBLE PRECISION,
           last_seq BIGINT, PRIMARY KEY (consumer, sensor))""",
       """CREATE TABLE IF NOT EXISTS consumer_offsets (consumer TEXT, topic TEXT, kafka_partition INT,
           next_offset BIGINT, PRIMARY KEY (consumer, topic, kafka_partition))""")


def fold(msgs: list[Message]) -> tuple[dict[str, list], dict[tuple[str, int], int]]:
    """Per-sensor deltas [n, temperature_sum, last_seq] and the next offset per partition."""
    deltas: dict[str, list] = defaultdict(lambda: [0, 0.0, -1])
    offsets: dict[tuple[str, int], int] = {}
    for m in msgs:
        offsets[(m.topic(), m.partition())] = m.offset() + 1
        r, _ = readings.parse(m.value())
        if r is not None:
            d = deltas[r.sensor]
            d[0], d[1], d[2] = d[0] + 1, d[1] + r.temperature, max(d[2], r.seq)
    return dict(deltas), offsets


def stored_offsets(consumer: str) -> dict[tuple[str, int], int]:
    return {(t, p): o for t, p, o in pg.query(
        "SELECT topic, kafka_partition, next_offset FROM consumer_offsets WHERE consumer = %s", (consumer,))}


def main(argv: list[str] | None = None) -> int:
    p = client.parser(JOB, __doc__)
    p.add_argument("--consumer", default=JOB, help="name under which state and offsets are stored")
    p.add_argument("--from-offsets", default=None, help='first start only: {"partition": offset} JSON')
    args = p.parse_args(argv)
    pg.ensure(*DDL)
    (topic,) = base.input_topics(JOB)
    initial = {int(k): v for k, v in json.loads(args.from_offsets).items()} if args.from_offsets else {}
    stored = stored_offsets(args.consumer)
    # No group management: the partitions are assigned explicitly, at the stored positions.
    consumer = clients.consumer(f"{args.consumer}-unused")
    consumer.assign([TopicPartition(topic, part, stored.get((topic, part), initial.get(part, 0)))
                     for part in range(catalogue.topics()[topic].partitions)])

    def apply(msgs: list[Message]) -> None:
        deltas, offsets = fold(msgs)
        with pg.connect() as conn:  # one transaction: state and offsets together
            for sensor, (n, tsum, last) in deltas.items():
                conn.execute(f"""INSERT INTO {TABLE} VALUES (%s, %s, %s, %s, %s)
                    ON CONFLICT (consumer, sensor) DO UPDATE SET n = {TABLE}.n + EXCLUDED.n,
                    temperature_sum = {TABLE}.temperature_sum + EXCLUDED.temperature_sum,
                    last_seq = GREATEST({TABLE}.last_seq, EXCLUDED.last_seq)""", (args.consumer, sensor, n, tsum, last))
            for (t, part), off in offsets.items():
                conn.execute("""INSERT INTO consumer_offsets VALUES (%s, %s, %s, %s) ON CONFLICT
                    (consumer, topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset""",
                             (args.consumer, t, part, off))

    try:
        client.poll_loop(consumer, apply, args.batch, args.max_idle_seconds)
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

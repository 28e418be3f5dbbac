"""self-managed offsets: the consumer keeps its position in PostgreSQL, not in Kafka.

Guarantee: each record is applied to the state exactly once, across crashes. How:
every polled batch updates the per-sensor state (count, temperature sum, last seq)
AND the next offset of each partition in ONE PostgreSQL transaction; the consumer
uses no group offsets (enable.auto.commit off, nothing committed to Kafka) and on
start assigns its partitions itself, at the offsets stored with the state. A crash
anywhere leaves state and offsets consistent: no record applied twice, none skipped.
Malformed records advance the offsets and are counted (`malformed` per consumer),
never applied.

    python -m kafka_patterns.jobs.self_managed_offsets --job self-managed-offsets --consumer NAME
        [--from-offsets JSON] [--until-offsets JSON] [--max-idle-seconds S] [--work-seconds S]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

from confluent_kafka import Message, TopicPartition

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base, client
from kafka_patterns.runtime import dead_letters, readings

DDL = ("""CREATE TABLE IF NOT EXISTS {table} (consumer TEXT, sensor TEXT, n BIGINT, temperature_sum DOUBLE PRECISION,
           last_seq BIGINT, PRIMARY KEY (consumer, sensor))""",
       """CREATE TABLE IF NOT EXISTS consumer_offsets (consumer TEXT, topic TEXT, kafka_partition INT,
           next_offset BIGINT, PRIMARY KEY (consumer, topic, kafka_partition))""",
       "CREATE TABLE IF NOT EXISTS consumer_malformed (consumer TEXT PRIMARY KEY, malformed BIGINT NOT NULL)")

Record = tuple[str, int, int, bytes | None]  # (topic, partition, offset, value)


class Done(Exception):
    """Every partition reached --until-offsets."""


def fold(records: Sequence[Record], until: dict[int, int] | None = None
         ) -> tuple[dict[str, list], dict[tuple[str, int], int], list[tuple[int, str]]]:
    """Per-sensor deltas [n, temperature_sum, last_seq], the next offset per partition
    and the malformed records of a batch, as (index in records, reason) (pure). Records
    at or past `until` (per partition) are not applied; their partition's next offset
    stops at `until`."""
    deltas: dict[str, list] = defaultdict(lambda: [0, 0.0, -1])
    offsets: dict[tuple[str, int], int] = {}
    malformed: list[tuple[int, str]] = []
    for i, (topic, part, offset, value) in enumerate(records):
        limit = None if until is None else until.get(part)
        if limit is not None and offset >= limit:
            offsets[(topic, part)] = limit
            continue
        offsets[(topic, part)] = max(offsets.get((topic, part), 0), offset + 1)
        r, reason = readings.parse(value)
        if r is None:
            malformed.append((i, reason))
            continue
        d = deltas[r.sensor]
        d[0], d[1], d[2] = d[0] + 1, d[1] + r.temperature, max(d[2], r.seq)
    return dict(deltas), offsets, malformed


def start_positions(partitions: int, stored: dict[int, int], initial: dict[int, int]) -> dict[int, int]:
    """Where each partition starts: the stored offset, else --from-offsets, else 0."""
    return {p: stored.get(p, initial.get(p, 0)) for p in range(partitions)}


def reached(positions: dict[int, int], until: dict[int, int] | None) -> bool:
    return until is not None and all(positions.get(p, 0) >= o for p, o in until.items())


def stored_offsets(consumer: str, topic: str) -> dict[int, int]:
    return dict(postgres.query("SELECT kafka_partition, next_offset FROM consumer_offsets WHERE consumer = %s AND "
                         "topic = %s", (consumer, topic)))


def save(conn, table: str, consumer: str, deltas: dict[str, list], offsets: dict[tuple[str, int], int],
         malformed: int) -> None:
    """State (in `table`) and offsets in the caller's transaction."""
    for sensor, (n, tsum, last) in deltas.items():
        conn.execute(f"""INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (consumer, sensor) DO UPDATE SET n = {table}.n + EXCLUDED.n,
            temperature_sum = {table}.temperature_sum + EXCLUDED.temperature_sum,
            last_seq = GREATEST({table}.last_seq, EXCLUDED.last_seq)""", (consumer, sensor, n, tsum, last))
    for (t, part), off in offsets.items():
        conn.execute("""INSERT INTO consumer_offsets VALUES (%s, %s, %s, %s) ON CONFLICT
            (consumer, topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset""",
                     (consumer, t, part, off))
    if malformed:
        conn.execute("""INSERT INTO consumer_malformed VALUES (%s, %s) ON CONFLICT (consumer)
            DO UPDATE SET malformed = consumer_malformed.malformed + EXCLUDED.malformed""", (consumer, malformed))


def as_partitions(text: str | None) -> dict[int, int]:
    return {int(k): int(v) for k, v in json.loads(text).items()} if text else {}


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--consumer", default=job.name, help="name under which state and offsets are stored")
    p.add_argument("--from-offsets", default=None, help='first start only: {"partition": offset} JSON')
    p.add_argument("--until-offsets", default=None,
                   help='stop once every partition reached {"partition": offset} (bounded run)')
    p.add_argument("--work-seconds", type=float, default=0.0,
                   help="simulated processing time per batch (lets the fault tests kill it mid-stream)")
    args = p.parse_args(argv)
    postgres.ensure(*DDL, table=job.table)
    (topic,) = job.inputs
    until = as_partitions(args.until_offsets) or None
    positions = start_positions(catalogue.topics()[topic].partitions, stored_offsets(args.consumer, topic),
                                as_partitions(args.from_offsets))
    if reached(positions, until):
        return 0
    # No group management and no offsets in Kafka: the partitions are assigned
    # explicitly, at the positions stored in PostgreSQL.
    consumer = kafka.consumer(f"{job.name}-{args.consumer}-unused", **{"enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, part, off) for part, off in positions.items()])
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic)

    def apply(msgs: list[Message]) -> None:
        if args.work_seconds:
            time.sleep(args.work_seconds)  # the batch's "processing", before its transaction
        deltas, offsets, malformed = fold([(m.topic(), m.partition(), m.offset(), m.value()) for m in msgs], until)
        for i, reason in malformed:
            letters.send(msgs[i], reason)
        letters.flush()  # before the offsets move on: a crash re-reads (and re-letters) them
        with postgres.connect() as conn:  # one transaction: state and offsets together
            save(conn, job.table, args.consumer, deltas, offsets, len(malformed))
        positions.update({part: off for (_, part), off in offsets.items()})
        if reached(positions, until):
            raise Done

    try:
        client.poll_loop(consumer, apply, args.batch, args.max_idle_seconds)
    except Done:
        pass
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""changelog-state: state kept in Kafka itself (the Kafka Streams idea). Per sensor, the
job keeps a running state (count, temperature sum, min, max, last seq) in memory and
in a compacted changelog topic keyed by sensor id (the last value per key is the
state); for each reading it writes the sensor's state after that reading to its output.

Guarantee: each reading is applied to the state exactly once and its output appears
exactly once to a read_committed reader, across crashes. How: ONE Kafka transaction
per polled batch holds the batch's outputs, its changelog writes (the last state of
each sensor it touched), its dead letters and its input offsets
(send_offsets_to_transaction); the input is read read_committed. On (re)start the job
first fences its previous instance (init_transactions aborts its open transaction),
then rebuilds the state from the changelog, read read_committed up to the end offsets
taken after the fence, and only then consumes input: the state it starts from is
exactly what the committed offsets say was applied.

A reading that breaks the contract (kafka_patterns.runtime.readings) is dead-lettered with its
reason, in the same transaction, and the job goes on.

    python -m kafka_patterns.jobs.changelog_state --job changelog-state [--transactional-id ID] [--group G]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from confluent_kafka import OFFSET_BEGINNING, KafkaError, Message, TopicPartition

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base, client
from kafka_patterns.runtime import dead_letters, readings, schema_check
from kafka_patterns.runtime.readings import Reading

# Long enough for a foreign open transaction on the changelog (a deleted pod's, whose
# successor has another transactional.id) to time out and abort: librdkafka's
# transaction.timeout.ms is 60 s.
REBUILD_TIMEOUT = 180.0


@dataclass(frozen=True)
class SensorState:
    """A sensor's running state, as its changelog value holds it."""
    count: int
    sum: float
    min: float
    max: float
    last_seq: int

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, value: bytes) -> SensorState:
        return cls(**json.loads(value))


def update(state: SensorState | None, reading: Reading) -> SensorState:
    """The state after one more reading (pure). last_seq is the highest seq seen: the
    same whatever order two input partitions' records of one sensor interleave in."""
    t = reading.temperature
    if state is None:
        return SensorState(1, t, t, t, reading.seq)
    return SensorState(state.count + 1, state.sum + t, min(state.min, t), max(state.max, t),
                       max(state.last_seq, reading.seq))


def rebuild(changelog: Iterable[tuple[bytes | None, bytes | None]]) -> dict[str, SensorState]:
    """The state a changelog's (key, value) records say, in offset order: the last value
    per key wins, a tombstone (no value) removes the key (pure)."""
    states: dict[str, SensorState] = {}
    for key, value in changelog:
        if key is None:
            continue
        sensor = key.decode()
        if value is None:
            states.pop(sensor, None)
        else:
            states[sensor] = SensorState.from_json(value)
    return states


@dataclass
class Batch:
    """What one polled batch does: per valid reading its output (the reading and the
    sensor's state after it), per sensor touched its last state (the changelog writes),
    and the records the contract refuses, with the reason."""
    totals: list[tuple[Reading, SensorState]]
    changed: dict[str, SensorState]
    bad: list[tuple[Message, str]]


def apply(states: dict[str, SensorState], msgs: Sequence, check: schema_check.SchemaCheck | None = None) -> Batch:
    """A batch applied on top of `states`, which it leaves as they are (pure): the caller
    adopts batch.changed once it has written them. `check`: the records' schema tags."""
    good, bad = readings.split(msgs, check)
    changed: dict[str, SensorState] = {}
    totals = []
    for _, r in good:
        changed[r.sensor] = update(changed.get(r.sensor, states.get(r.sensor)), r)
        totals.append((r, changed[r.sensor]))
    return Batch(totals, changed, bad)


def total_value(reading: Reading, state: SensorState) -> bytes:
    """An output record: the reading itself (so a reader can tell which one it was) and
    the sensor's state after it."""
    return json.dumps({**asdict(reading), "state": asdict(state)}, separators=(",", ":")).encode()


def read_whole(topic: str, group: str, timeout: float = REBUILD_TIMEOUT, start: dict[int, int] | None = None,
               committed_only: bool = True) -> list[Message]:
    """Every record of every partition of `topic`, read read_committed (committed_only)
    from the beginning (or `start`) to the end offsets (high watermarks) taken now.
    Waiting for the high watermark, not
    the last stable offset, waits out a foreign open transaction: records committed
    after it stay invisible until it ends. The end of a partition is seen by its offset
    or by librdkafka's end-of-partition event there (the last record of a transactional
    topic is a commit marker, which is never delivered)."""
    ends = kafka.end_offsets(topic, catalogue.topics()[topic].partitions)
    start = start or {}
    consumer = kafka.consumer(group, **{"isolation.level": "read_committed" if committed_only else "read_uncommitted",
                                          "enable.partition.eof": True})
    pending = {p for p, end in ends.items() if end > start.get(p, 0)}
    out: list[Message] = []

    def reached_the_ends() -> bool:
        for m in consumer.consume(1000, timeout=0.5):
            err = m.error()
            if err is not None and err.code() != KafkaError._PARTITION_EOF:
                if not err.retriable():
                    raise RuntimeError(f"reading {topic}: {err}")
                continue
            if err is None and m.offset() < ends[m.partition()]:
                out.append(m)
            # A record's offset is the next-to-read minus one; an end event's is the next.
            if m.offset() + (err is None) >= ends[m.partition()]:
                pending.discard(m.partition())
        return not pending

    try:
        if pending:
            consumer.assign([TopicPartition(topic, p, start.get(p, OFFSET_BEGINNING)) for p in pending])
            kafka.wait_until(reached_the_ends, timeout, interval=0, what=f"{topic} read to {ends}")
    finally:
        consumer.close()
    return out


def read_state(changelog: str, group: str) -> dict[str, SensorState]:
    """The state the changelog holds now. The whole topic, every partition: simplest
    correct for this size (a sensor's state is found wherever its key hashes, and no
    partition of the input has to be matched to one of the changelog); one instance
    holds every sensor (the chart runs one pod: its catalogue kubernetes.single)."""
    return rebuild((m.key(), m.value()) for m in read_whole(changelog, group))


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--transactional-id", default=job.name)
    args = p.parse_args(argv)
    (source,), (changelog,), (totals_topic,) = job.inputs, job.state, job.output_topics
    producer = client.transactional_producer(args)
    # After the fence: the previous instance's open transaction is aborted, so the
    # changelog's end is what the committed input offsets say was applied.
    states = read_state(changelog, f"{job.name}-rebuild")
    print(f"{job.name}: state of {len(states)} sensors rebuilt from {changelog}", file=sys.stderr, flush=True)
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic, producer)
    check = schema_check.for_topic(source)

    def write(msgs: list[Message]) -> None:
        batch = apply(states, msgs, check)
        for m, reason in batch.bad:
            letters.send(m, reason)  # in the transaction: lettered once, with the offsets
        for r, state in batch.totals:
            producer.produce(totals_topic, key=r.sensor.encode(), value=total_value(r, state))
        for sensor, state in batch.changed.items():
            producer.produce(changelog, key=sensor.encode(), value=state.to_json())
        # Adopted before the commit: a commit that fails raises out of the loop and the
        # job stops; its restart rebuilds the state from the changelog, never from here.
        states.update(batch.changed)

    try:
        client.in_transactions(args, source, producer, write)
    finally:
        print(f"{job.name}: stopped; {letters.sent} malformed readings dead-lettered", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

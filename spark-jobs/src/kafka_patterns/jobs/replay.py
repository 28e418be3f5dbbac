"""replay / reprocessing: a consumer computes per-sensor aggregates of one run's
readings; because Kafka keeps the log, the same aggregate is reproduced by replaying
from an explicit offset (seek) or from a point in time (offsets_for_times).

    python -m kafka_patterns.jobs.replay --job replay --run RUN (--from-offsets JSON | --from-timestamp MS)
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

from confluent_kafka import TopicPartition

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import dead_letters, readings

DDL = """CREATE TABLE IF NOT EXISTS {table} (run TEXT, replay TEXT, sensor TEXT, n BIGINT,
          mean_temperature DOUBLE PRECISION, PRIMARY KEY (run, replay, sensor))"""


def aggregate(values: list[readings.Reading]) -> dict[str, tuple[int, float]]:
    """Per-sensor (count, mean temperature rounded to 6 places)."""
    acc: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for r in values:
        acc[r.sensor][0] += 1
        acc[r.sensor][1] += r.temperature
    return {s: (n, round(t / n, 6)) for s, (n, t) in acc.items()}


def start_positions(topic: str, offsets: dict[int, int] | None, timestamp_ms: int | None) -> list[TopicPartition]:
    parts = range(catalogue.topics()[topic].partitions)
    if offsets is not None:
        return [TopicPartition(topic, p, offsets.get(p, 0)) for p in parts]
    probe = kafka.consumer("replay-offsets-for-times")
    try:
        return probe.offsets_for_times([TopicPartition(topic, p, timestamp_ms) for p in parts], timeout=10)
    finally:
        probe.close()


def replay(run: str, positions: list[TopicPartition], end: dict[int, int],
           letters: dead_letters.DeadLetters) -> dict[str, tuple[int, float]]:
    """Read from positions up to the end offsets; aggregate the run's readings. Records
    that are not readings (of any run: a bad record carries no run) are dead-lettered."""
    consumer = kafka.consumer(f"replay-{run}")
    live = [tp for tp in positions if 0 <= tp.offset < end[tp.partition]]
    consumer.assign(live)
    position = {tp.partition: tp.offset for tp in live}
    found: list[readings.Reading] = []

    def done() -> bool:
        for m in consumer.consume(1000, timeout=0.5):
            if not m.error():
                position[m.partition()] = m.offset() + 1
                r, reason = readings.parse(m.value())
                if r is None:
                    letters.send(m, reason)
                elif r.run == run:
                    found.append(r)
        return all(position[p] >= end[p] for p in position)

    try:
        kafka.wait_until(done, 60, interval=0, what="the replay to reach the end offsets")
        letters.flush()
    finally:
        consumer.close()
    return aggregate(found)


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = base.JobParser(job, __doc__)
    p.add_argument("--run", required=True, help="the run id whose readings to aggregate")
    p.add_argument("--name", default=None, help="label of this replay in the table (default: how it started)")
    start = p.add_mutually_exclusive_group(required=True)
    start.add_argument("--from-offsets", help='{"partition": offset} JSON')
    start.add_argument("--from-timestamp", type=int, help="epoch ms: replay from offsets_for_times")
    args = p.parse_args(argv)
    (topic,) = job.inputs
    offsets = {int(k): v for k, v in json.loads(args.from_offsets).items()} if args.from_offsets else None
    end = kafka.end_offsets(topic, catalogue.topics()[topic].partitions)
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic)
    result = replay(args.run, start_positions(topic, offsets, args.from_timestamp), end, letters)
    label = args.name or ("offsets" if offsets is not None else "timestamp")
    postgres.ensure(DDL, table=job.table)
    with postgres.connect() as conn:
        conn.execute(f"DELETE FROM {job.table} WHERE run = %s AND replay = %s", (args.run, label))
        postgres.insert_rows(conn, job.table, ("run", "replay", "sensor", "n", "mean_temperature"),
                       [(args.run, label, s, n, m) for s, (n, m) in result.items()])
    print(json.dumps({"run": args.run, "replay": label, "sensors": len(result),
                      "records": sum(n for n, _ in result.values())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

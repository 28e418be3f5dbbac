"""Foundation smoke check: records produced with acks=all + idempotence to an RF-3
topic all come back, none missing or duplicated, per-partition order kept.

    python -m pattern_harness.smoke [--records 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import TopicPartition

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from pattern_harness.delivery import Delivery, account

TOPIC = "smoke.records"


@dataclass(frozen=True)
class SmokeResult:
    delivery: Delivery
    # Consumed offsets that went backwards within a partition.
    partition_order_violations: int
    produce_seconds: float
    consume_seconds: float

    @property
    def ok(self) -> bool:
        d = self.delivery
        return d.lost == 0 and d.duplicated == 0 and d.reordered == 0 and self.partition_order_violations == 0


def run(records: int = 10_000, keys: int = 50, timeout: float = 120.0) -> SmokeResult:
    topic = catalogue.topics()[TOPIC]
    run_id = uuid.uuid4().hex
    start = kafka.end_offsets(topic.name, topic.partitions)

    acked: list[tuple[str, int]] = []
    errors: list[str] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            v = json.loads(msg.value())
            acked.append((v["key"], v["seq"]))

    t0 = time.monotonic()
    producer = kafka.producer()
    for seq in range(records):
        key = f"sensor-{seq % keys}"
        producer.produce(topic.name, key=key, value=json.dumps({"run": run_id, "key": key, "seq": seq}),
                         on_delivery=on_delivery)
        producer.poll(0)
    remaining = producer.flush(timeout)
    produce_seconds = time.monotonic() - t0
    if remaining or errors:
        raise RuntimeError(f"{remaining} records unsent, {len(errors)} send errors (first: {errors[:1]})")

    end = kafka.end_offsets(topic.name, topic.partitions)
    consumer = kafka.consumer(f"smoke-{run_id}")
    consumer.assign([TopicPartition(topic.name, p, start[p]) for p in range(topic.partitions)])
    received: list[tuple[str, int]] = []
    last_offset: dict[int, int] = {}
    position = dict(start)
    violations = 0
    t1 = time.monotonic()

    def drained() -> bool:
        nonlocal violations
        for msg in consumer.consume(num_messages=1000, timeout=0.5):
            if msg.error():
                raise RuntimeError(f"consume error: {msg.error()}")
            p, off = msg.partition(), msg.offset()
            if off <= last_offset.get(p, -1):
                violations += 1
            last_offset[p] = off
            position[p] = off + 1
            v = json.loads(msg.value())
            if v["run"] == run_id:
                received.append((v["key"], v["seq"]))
        return all(position[p] >= end[p] for p in end)

    try:
        kafka.wait_until(drained, timeout, interval=0, what=f"{records} records back from {topic.name}")
    finally:
        consumer.close()
    return SmokeResult(account(acked, received, order="per-key"), violations,
                       produce_seconds, time.monotonic() - t1)


def report(result: SmokeResult) -> str:
    d = result.delivery
    rate = d.acked / result.produce_seconds if result.produce_seconds else 0
    return "\n".join([
        f"smoke: {d.acked} acked (acks=all, idempotent, RF {catalogue.topics()[TOPIC].replication_factor}) "
        f"in {result.produce_seconds:.1f}s ({rate:,.0f} records/s), {d.received} consumed "
        f"in {result.consume_seconds:.1f}s",
        f"       lost={d.lost} duplicated={d.duplicated} reordered(per key)={d.reordered} "
        f"partition-order violations={result.partition_order_violations} -> {'PASS' if result.ok else 'FAIL'}",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    result = run(parser.parse_args().records)
    print(report(result))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())

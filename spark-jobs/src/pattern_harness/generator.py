"""Weather-station reading generator: keyed readings at a given rate, with realistic
event-time skew, a share of late events and, on request, malformed events.

    python -m pattern_harness.generator --topic weather.readings --count 5000 --rate 1000
    python -m pattern_harness.generator --topic weather.readings --count 1000 --late 0.05 --malformed 0.01

Prints one JSON summary line (run id, acked, errors). As a library, `produce()`
returns the acknowledged record ids for delivery accounting.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_patterns.clients import kafka, registry
from kafka_patterns.config import catalogue
from kafka_patterns.runtime.readings import Reading, station_of
from pattern_harness import bad_input

# Normal network/clock skew of event time behind wall-clock time, and how far behind
# a late event is (beyond the jobs' watermark delay).
SKEW_MS = (0, 2_000)
# The version of the reading schema (catalogue/schemas/reading) make_reading writes.
READING_VERSION = 1
LATE_MS = (120_000, 600_000)
# The spread (°C) of a sensor's readings around its base temperature.
TEMPERATURE_SIGMA = 8.0


@dataclass
class Produced:
    run: str
    topic: str
    acked: list[tuple[str, int]] = field(default_factory=list)
    # Records that never got an acknowledgement (sent with acks=0 they are not waited for).
    errors: list[str] = field(default_factory=list)
    # The acknowledged readings themselves (for checks that need their values).
    readings: list[Reading] = field(default_factory=list)
    malformed: int = 0
    late: int = 0
    seconds: float = 0.0

    @property
    def summary(self) -> dict:
        return {"run": self.run, "topic": self.topic, "acked": len(self.acked), "errors": len(self.errors),
                "malformed": self.malformed, "late": self.late, "seconds": round(self.seconds, 2)}


def make_reading(run: str, seq: int, sensors: int, stations: int, rng: random.Random, now_ms: int,
                 late: bool = False) -> Reading:
    """One plausible reading; pure apart from the random generator passed in."""
    n = seq % sensors
    skew = rng.randint(*(LATE_MS if late else SKEW_MS))
    base = 12.0 + 10.0 * (n % 5) / 4
    # Noise cut at 3 sigma (12-22 °C +- 24): an unbounded draw leaves the readings'
    # plausible range (-60..60 °C) about once in a few million readings, and a generated
    # reading must never be a bad record (a demo dead-lettered one at 61.91 °C and
    # counted it lost).
    noise = max(-3 * TEMPERATURE_SIGMA, min(3 * TEMPERATURE_SIGMA, rng.gauss(0, TEMPERATURE_SIGMA)))
    return Reading(run=run, sensor=f"sensor-{n:02d}", station=station_of(n, stations), seq=seq,
                   temperature=round(base + noise, 2), humidity=round(rng.uniform(20, 95), 1),
                   ts=now_ms - skew)


MALFORMED = (b"{not json", b'{"sensor": "sensor-00", "seq": "x"}', b'"just a string"',
             b'{"run":"r","sensor":"s","station":"t","seq":1,"temperature":999,"humidity":1,"ts":1}')


def produce(topic: str, count: int, rate: float | None = None, run: str | None = None, sensors: int = 20,
            stations: int = 4, late: float = 0.0, malformed: float = 0.0, seed: int | None = None,
            seq_start: int = 0, producer_config: dict | None = None, timeout: float = 120.0,
            clock: Callable[[int], int] | None = None) -> Produced:
    """Produce `count` readings (plus malformed extras) and wait for their acknowledgements.
    `rate` is records/s (None = as fast as possible). `clock(i)` is the time (epoch ms)
    the i-th reading's event time is drawn behind (skew, lateness); default: now, a
    scenario passes its own to place readings in the windows it wants."""
    if topic not in catalogue.topics():
        raise ValueError(f"topic {topic!r} is not in the catalogue (catalogue/catalogue.yaml)")
    out = Produced(run or uuid.uuid4().hex[:12], topic)
    rng = random.Random(seed)
    producer = kafka.producer(**(producer_config or {}))
    # Each reading tagged with the registry's id of the schema version it is written in.
    tag = registry.value_tag("reading", READING_VERSION) if catalogue.schema_of(topic) == "reading" else []

    def acknowledged(reading: Reading | None):
        def on_delivery(err, _msg) -> None:
            if err is not None:
                out.errors.append(str(err))
            elif reading is not None:
                out.acked.append(reading.record_id)
                out.readings.append(reading)
        return on_delivery

    # The bad-input suite's cases, when it runs: ahead of the readings, so a pattern that
    # has taken every reading has also come past every bad record (offsets are in order).
    bad_input.inject_if_asked(topic, out.run)
    t0 = time.monotonic()
    for i in range(count):
        if rate:
            ahead = i / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)  # pacing to the requested rate, not a wait for a condition
        is_late = rng.random() < late
        out.late += is_late
        now_ms = clock(i) if clock else int(time.time() * 1000)
        r = make_reading(out.run, seq_start + i, sensors, stations, rng, now_ms, is_late)
        producer.produce(topic, key=r.sensor, value=r.to_json(), headers=tag, on_delivery=acknowledged(r))
        if malformed and rng.random() < malformed:
            producer.produce(topic, key=r.sensor, value=rng.choice(MALFORMED), on_delivery=acknowledged(None))
            out.malformed += 1
        producer.poll(0)
    remaining = producer.flush(timeout)
    out.seconds = time.monotonic() - t0
    if remaining:
        out.errors.append(f"{remaining} records still unacknowledged after {timeout:.0f}s")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topic", default="weather.readings")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--rate", type=float, default=None, help="records per second (default: as fast as possible)")
    p.add_argument("--sensors", type=int, default=20)
    p.add_argument("--stations", type=int, default=4)
    p.add_argument("--late", type=float, default=0.02, help="share of events late beyond the watermark")
    p.add_argument("--malformed", type=float, default=0.0, help="share of extra malformed events")
    p.add_argument("--acks", default="all", choices=["all", "1", "0"])
    p.add_argument("--run", default=None, help="run id stamped on every reading (default: random)")
    a = p.parse_args(argv)
    config = {} if a.acks == "all" else {"acks": a.acks, "enable.idempotence": False}
    out = produce(a.topic, a.count, a.rate, a.run, a.sensors, a.stations, a.late, a.malformed,
                  producer_config=config)
    print(json.dumps(out.summary))
    return 1 if out.errors else 0


if __name__ == "__main__":
    sys.exit(main())

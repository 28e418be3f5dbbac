"""self-managed offsets: state and offsets in one PostgreSQL transaction; the consumer
fails mid-stream (SIGKILLed or stopped, once per fault) and restarts from the offsets
stored with its state, then
runs to the end offsets captured after producing (--until-offsets).

Measured against a Python computation over the same offset range read back from
Kafka: per-sensor count (a record applied twice shows as a duplicate, one skipped as
lost), temperature sum and last seq; the stored offsets must equal the range's end.
weather.readings is shared: the range [start, end) may hold other runs' readings too,
and the expectation is computed over everything in it, so they cannot skew it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from confluent_kafka import TopicPartition

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import self_managed_offsets as job_module
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import Delivery
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 3_000}


def read_range(topic: str, start: dict[int, int], end: dict[int, int], timeout: float = 60) -> list:
    """The valid readings of topic in [start, end) per partition (an independent reader)."""
    consumer = kafka.consumer(f"verify-{base.new_run()}")
    consumer.assign([TopicPartition(topic, p, o) for p, o in start.items() if o < end[p]])
    pos = dict(start)
    out = []

    def done() -> bool:
        for m in consumer.consume(500, timeout=0.5):
            if m.error() or m.offset() >= end[m.partition()]:
                continue
            pos[m.partition()] = m.offset() + 1
            r, _ = readings.parse(m.value())
            if r is not None:
                out.append(r)
        return all(pos[p] >= end[p] for p in end)

    try:
        kafka.wait_until(done, timeout, interval=0, what=f"{topic} read back to {end}")
    finally:
        consumer.close()
    return out


@base.timed
def run(records: int = 4_000,
        faults: Sequence[base.FailureMode] = (base.FailureMode.SIGKILL,) * 2) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    name = f"smo-{run_id}"
    postgres.ensure(*job_module.DDL, table=table)
    starting = base.end_offsets([topic])[topic]
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    generator.produce(topic, records, run=run_id)
    end = base.end_offsets([topic])[topic]
    total = sum(end.values()) - sum(starting.values())
    args = ["--consumer", name, "--from-offsets", json.dumps(starting), "--until-offsets", json.dumps(end),
            "--batch", "50", "--work-seconds", "0.1"]
    def progress() -> int:
        """Records of the range behind the stored offsets (partitions not stored yet: 0)."""
        stored = job_module.stored_offsets(name, topic)
        return sum(stored.get(p, o) - o for p, o in starting.items())

    injected, kill_points = [], []
    for k, mode in enumerate(faults):
        before = progress()
        step = max(1, (total - before) // (len(faults) + 1 - k))
        proc = base.spawn_job(job, args)
        try:
            at = kafka.wait_until(lambda b=before + step: (n := progress()) >= b and n, 60, interval=0.2,
                                    what=f"{job} to store more offsets")
            rc = proc.kill(mode)
        finally:
            proc.hard_kill()
        kill_points.append(at)
        injected.append(f"{mode.value} at {at}/{total} (exit {rc})")
        base.progress(f"{KEY}: fault {k + 1}/{len(faults)}: {injected[-1]}; restarting from the offsets in "
                      "PostgreSQL")
    final = base.spawn_job(job, [*args, "--max-idle-seconds", "10"])
    rc = final.wait(timeout=120)
    state = {s: (n, tsum, last) for s, n, tsum, last in postgres.query(
        f"SELECT sensor, n, temperature_sum, last_seq FROM {table} WHERE consumer = %s", (name,))}
    want = readings.totals_per_sensor(read_range(topic, starting, end))
    lost = sum(max(0, n - state.get(s, (0,))[0]) for s, (n, _, _) in want.items())
    duplicated = sum(max(0, n - want.get(s, (0,))[0]) for s, (n, _, _) in state.items())
    expected, applied = sum(n for n, _, _ in want.values()), sum(n for n, _, _ in state.values())
    stored = job_module.stored_offsets(name, topic)
    same_state = set(state) == set(want) and all(
        state[s][0] == n and abs(state[s][1] - tsum) < 1e-6 * max(1.0, abs(tsum)) and state[s][2] == last
        for s, (n, tsum, last) in want.items())
    d = Delivery(expected, applied, lost, duplicated, 0)
    return base.Outcome(KEY, JOBS, d, base.promise(job), expected, applied,
                        checks={**base.fault_check(faults, injected),
                                "every fault landed mid-range": all(0 < a < total for a in kill_points),
                                "the bounded run stopped at the end offsets": rc == 0,
                                "stored offsets equal the topic end": stored == end,
                                "per-sensor count, temperature sum and last seq equal Python's": same_state},
                        faults=injected,
                        notes=[f"{'; '.join(injected)}; range of {total} records ({expected} valid readings, "
                               f"{records} of this run)"])

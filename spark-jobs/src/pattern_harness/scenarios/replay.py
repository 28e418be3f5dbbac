"""replay / reprocessing: the aggregate of a run computed from the producer's view is
reproduced by a replay from the run's start offsets and one from its start timestamp."""

from __future__ import annotations

import json
import time

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue, credentials
from kafka_patterns.jobs import replay as job_module
from pattern_harness import generator
from pattern_harness.delivery import Delivery
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


@base.timed
def run(records: int = 4_000) -> base.Outcome:
    job = JOBS[0]
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    starting = base.end_offsets([topic])[topic]
    # A little before the first record: brokers and this host share a clock here.
    since_ms = int(time.time() * 1000) - 1
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    expected = job_module.aggregate(produced.readings)
    base.progress(f"{KEY}: replaying from offsets, then from timestamp {since_ms}")
    with credentials.as_user(job), base.job_output():
        job_module.main(["--job", job, "--run", run_id, "--from-offsets", json.dumps(starting)])
        job_module.main(["--job", job, "--run", run_id, "--from-timestamp", str(since_ms)])
    got = {label: {s: (n, m) for s, n, m in postgres.query(
        f"SELECT sensor, n, mean_temperature FROM {table} WHERE run = %s AND replay = %s",
        (run_id, label))} for label in ("offsets", "timestamp")}
    n_off = sum(n for n, _ in got["offsets"].values())
    lost = max(0, records - n_off)
    dup = max(0, n_off - records)
    return base.Outcome(KEY, JOBS, Delivery(records, n_off, lost, dup, 0), base.promise(job), records, n_off,
                        checks={"replay from offsets reproduces the aggregate": got["offsets"] == expected,
                                "replay from a timestamp reproduces the aggregate": got["timestamp"] == expected},
                        notes=[f"{len(expected)} sensor aggregates identical from offsets and from timestamp"])


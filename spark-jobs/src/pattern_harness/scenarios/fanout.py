"""pub-sub fan-out: the logger, the averager and the min/max job read the same
readings independently (own checkpoints); each sees every acknowledged reading.

Measured: the logger's rows by record id (lost, duplicated, reordered per sensor);
the aggregators' per-sensor counts against the acknowledged readings (a shortfall is
counted as lost, an excess as duplicated) and their mean/min/max against the same
aggregates computed in Python from the acknowledged readings."""

from __future__ import annotations

import math
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.runtime.readings import Reading
from pattern_harness import generator
from pattern_harness.delivery import Delivery, account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


def expected_aggregates(readings: list[Reading]) -> dict[str, tuple[int, float, float, float]]:
    """sensor -> (count, mean, min, max) of the temperatures."""
    temps: dict[str, list[float]] = defaultdict(list)
    for r in readings:
        temps[r.sensor].append(r.temperature)
    return {s: (len(t), sum(t) / len(t), min(t), max(t)) for s, t in temps.items()}


def count_gaps(expected: dict[str, int], got: dict[str, int]) -> tuple[int, int]:
    """(missing, extra) records summed over sensors."""
    missing = sum(max(0, n - got.get(s, 0)) for s, n in expected.items())
    extra = sum(max(0, n - expected.get(s, 0)) for s, n in got.items())
    return missing, extra


def run_concurrently(jobs: list[str], run_id: str, starting: dict) -> None:
    """Run bounded jobs at the same time (threads sharing this process's Spark session,
    each query with its own checkpoint); the first failure is raised."""
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for f in [pool.submit(base.run_job, job, run_id, starting) for job in jobs]:
            f.result()


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


@base.timed
def run(records: int = 2_000) -> base.Outcome:
    topic = base.input_topics(JOBS[0])[0]
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    base.progress(f"{KEY}: running subscribers {', '.join(JOBS)} concurrently (Spark, available-now, "
                  "one checkpoint each)")
    run_concurrently(JOBS, run_id, starting)

    logged = [tuple(r) for r in postgres.query(
        f"SELECT sensor, seq FROM {base.output_table('fanout-logger')} WHERE run = %s ORDER BY id", (run_id,))]
    d = account(produced.acked, logged, order="per-key")
    want = expected_aggregates(produced.readings)
    want_n = {s: v[0] for s, v in want.items()}
    avg = {s: (n, total / n) for s, n, total in postgres.query(
        f"SELECT sensor, SUM(n)::bigint, SUM(temperature_sum) FROM {base.output_table('fanout-averager')} "
        "WHERE run = %s GROUP BY sensor", (run_id,))}
    mm = {s: (n, lo, hi) for s, n, lo, hi in postgres.query(
        f"SELECT sensor, SUM(n)::bigint, MIN(temperature_min), MAX(temperature_max) "
        f"FROM {base.output_table('fanout-minmax')} WHERE run = %s GROUP BY sensor", (run_id,))}
    avg_missing, avg_extra = count_gaps(want_n, {s: v[0] for s, v in avg.items()})
    mm_missing, mm_extra = count_gaps(want_n, {s: v[0] for s, v in mm.items()})
    delivery = Delivery(acked=d.acked, received=d.received + sum(v[0] for v in avg.values())
                        + sum(v[0] for v in mm.values()),
                        lost=d.lost + avg_missing + mm_missing, duplicated=d.duplicated + avg_extra + mm_extra,
                        reordered=d.reordered, unacked=d.unacked)
    checks = {
        "logger saw every reading once": d.lost == 0 and d.duplicated == 0 and len(logged) == len(produced.acked),
        "averager counts per sensor = produced": {s: v[0] for s, v in avg.items()} == want_n,
        "averager means = Python's": avg.keys() == want.keys() and all(same(avg[s][1], want[s][1]) for s in want),
        "minmax counts per sensor = produced": {s: v[0] for s, v in mm.items()} == want_n,
        "minmax min/max = Python's": mm.keys() == want.keys() and all(
            same(mm[s][1], want[s][2]) and same(mm[s][2], want[s][3]) for s in want),
    }
    notes = [f"subscribers saw: logger {len(logged)} rows, averager {sum(v[0] for v in avg.values())} readings, "
             f"minmax {sum(v[0] for v in mm.values())} readings, of {len(produced.acked)} acknowledged"]
    return base.Outcome(KEY, JOBS, delivery, base.promise("fanout-logger"), records_in=len(produced.acked),
                        records_out=len(logged), checks=checks, notes=notes)

"""Patterns measured on Kubernetes, against what `make deploy` runs.

Bounded jobs (the batch pattern) run through the local scenarios themselves with
KP_JOB_RUNNER=kubernetes: each run is a one-shot SparkApplication (kube.run_once).
A streaming job cannot be run that way beside its deployed copy, which reads the
same topic into the same table; its scenario is the deployed application itself:
readings with a fresh run id go to its input at a steady rate, its driver pod is
deleted `driver_kills` times while they arrive (the operator restarts the
application, which resumes from the checkpoint on its volume), and the run's rows
in its sink are accounted like the local scenarios do: lost, duplicated, reordered.
"""

from __future__ import annotations

import threading

from kafka_patterns import generator, kube, pg
from kafka_patterns.delivery import Order, account
from kafka_patterns.scenarios import base


def distinct_rows_sql(table: str) -> str:
    return f"SELECT count(DISTINCT (sensor, seq)) FROM {table} WHERE run = %s"


@base.timed
def streaming(job: str, records: int = 3_000, rate: float = 150, order: Order = "per-key",
              driver_kills: int = 0, timeout: float = 600) -> base.Outcome:
    """The deployed streaming job delivers a run of readings into its table; with
    driver_kills its driver pod is deleted that many times mid-stream."""
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    key = f"{job} on kubernetes" + (f", driver deleted x{driver_kills}" if driver_kills else "")
    base.progress(f"{key}: producing {records} readings to {topic} at {rate:.0f}/s")
    # The readings go out in driver_kills + 1 chunks; the k-th deletion lands while
    # chunk k is still arriving, so later chunks are not even produced yet: every
    # deletion is mid-stream, however long a restart takes.
    chunk = records // (driver_kills + 1)
    acked: list = []
    kills, rows_at_kills = [], []
    for k in range(driver_kills + 1):
        count = chunk if k < driver_kills else records - chunk * driver_kills
        produced: dict[str, generator.Produced] = {}
        producer = threading.Thread(target=lambda c=count, s=k * chunk, out=produced: out.setdefault(
            "out", generator.produce(topic, c, rate=rate, run=run_id, seq_start=s)), daemon=True)
        producer.start()
        if k < driver_kills:
            target = k * chunk + count // 2
            n = base.wait_for_rows(distinct_rows_sql(table), (run_id,), target, timeout,
                                   f"{job} to write {target} of the run's rows")
            pod = kube.delete_driver(job)
            rows_at_kills.append(n)
            kills.append(f"driver {pod} deleted at {n}/{records} rows")
            base.progress(f"{key}: {kills[-1]}")
        producer.join(timeout)
        if "out" not in produced:
            raise TimeoutError(f"producing {count} readings to {topic} took longer than {timeout:.0f}s")
        acked += produced["out"].acked
    # Every acked reading present once means every offset of the run was processed,
    # so a micro-batch replayed after a restart has already written its copies.
    base.wait_for_rows(distinct_rows_sql(table), (run_id,), len(acked), timeout,
                       f"{job} to write all {len(acked)} acked readings")
    received = [tuple(r) for r in pg.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))]
    return base.Outcome(key, [job], account(acked, received, order=order), base.promise(job),
                        records_in=len(acked), records_out=len(received),
                        checks={f"driver deleted {driver_kills} times mid-stream": len(kills) == driver_kills
                                and all(n < len(acked) for n in rows_at_kills)},
                        notes=kills)

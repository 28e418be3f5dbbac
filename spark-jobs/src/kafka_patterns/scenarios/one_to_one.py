"""one-to-one: readings produced with acks=all reach the `readings` table once each,
in per-sensor order."""

from __future__ import annotations

from kafka_patterns import generator, pg
from kafka_patterns.delivery import Order, account
from kafka_patterns.scenarios import base

KEY = "one-to-one"
ORDER = 10
JOBS = ["one-to-one"]


def produce_run_and_account(key: str, job: str, records: int, order: Order) -> base.Outcome:
    """Produce to the job's input, run the job bounded, account its sink table."""
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    base.progress(f"{key}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    base.progress(f"{key}: running job {job} (Spark, available-now)")
    base.run_job(job, run_id, starting)
    received = pg.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))
    d = account(produced.acked, [tuple(r) for r in received], order=order)
    return base.Outcome(key, [job], d, base.promise(job), records_in=len(produced.acked), records_out=len(received))


@base.timed
def run(records: int = 5_000) -> base.Outcome:
    return produce_run_and_account(KEY, JOBS[0], records, "per-key")

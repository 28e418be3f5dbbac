"""one-to-one: readings produced with acks=all reach the `readings` table once each,
in per-sensor order."""

from __future__ import annotations

from kafka_patterns import generator, pg
from kafka_patterns.delivery import account
from kafka_patterns.scenarios import base

KEY = "one-to-one"
ORDER = 10
JOBS = ["one-to-one"]


@base.timed
def run(records: int = 5_000) -> base.Outcome:
    job = JOBS[0]
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    base.progress(f"{KEY}: running job {job} (Spark, available-now)")
    base.run_job(job, run_id, starting)
    received = [(s, q) for s, q in pg.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))]
    d = account(produced.acked, received, order="per-key")
    return base.Outcome(KEY, JOBS, d, base.promise(job), records_in=len(produced.acked), records_out=len(received))

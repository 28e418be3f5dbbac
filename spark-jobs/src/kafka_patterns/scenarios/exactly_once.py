"""exactly-once (Spark): readings -> PostgreSQL through checkpointed micro-batches and a
transactional sink; the job is SIGKILLed mid-stream several times and restarted.
Counts: zero lost, zero duplicated (the table has no unique key that would hide them)."""

from __future__ import annotations

from kafka_patterns import generator, pg
from kafka_patterns.delivery import account
from kafka_patterns.jobs import one_to_one
from kafka_patterns.scenarios import base

KEY = "exactly-once"
ORDER = 120
JOBS = ["exactly-once"]
# Small micro-batches so that kills land between many writes and checkpoint commits.
BATCH = "200"


def unique_keys(table: str) -> list[list[str]]:
    """The column lists of the table's unique indexes (the primary key included)."""
    rows = pg.query("""SELECT array_agg(a.attname ORDER BY a.attnum) FROM pg_index i
                       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                       WHERE i.indrelid = %s::regclass AND i.indisunique GROUP BY i.indexrelid""", (table,))
    return sorted(list(r[0]) for r in rows)


def killed_job_run(key: str, job: str, records: int, kills: int) -> base.Outcome:
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    base.progress(f"{key}: producing {records} readings to {topic} (acks=all, idempotent)")
    produced = generator.produce(topic, records, run=run_id)
    count_sql = f"SELECT count(*) FROM {table} WHERE run = %s"
    base.progress(f"{key}: running {job} as a process, {kills} hard kills mid-stream")
    one_to_one.ensure_table(table)
    # The final drain takes bigger micro-batches: the topic is shared, and what other
    # runs produced meanwhile is in this run's range too.
    kill_points = base.run_with_kills(job, run_id, starting, kills, count_sql, records,
                                      "--max-offsets-per-trigger", BATCH, "--trigger-seconds", "0.2",
                                      drain=("--max-offsets-per-trigger", "5000"))
    received = pg.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))
    d = account(produced.acked, [tuple(r) for r in received], order="none")
    return base.Outcome(key, [job], d, base.promise(job), len(produced.acked), len(received),
                        checks={f"killed {kills} times mid-stream": len(kill_points) == kills,
                                "no unique key on the sink that would hide duplicates": unique_keys(table) == [["id"]]},
                        notes=[f"{job}: {'; '.join(kill_points)}"])


@base.timed
def run(records: int = 3_000, kills: int = 3) -> base.Outcome:
    return killed_job_run(KEY, JOBS[0], records, kills)

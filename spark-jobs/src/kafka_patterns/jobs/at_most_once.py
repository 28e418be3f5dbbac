"""fire-and-forget / at-most-once: the producer sends with acks=0 (never waits, never
retries) and the consumer commits each batch's offsets BEFORE processing it. A
consumer that dies between the commit and the processing never sees that batch
again: records can be lost (counted), never duplicated.

    python -m kafka_patterns.jobs.at_most_once --job at-most-once [--group G] [--max-idle-seconds S]
        [--work-seconds S]
"""

from __future__ import annotations

import os
import sys
import time

from confluent_kafka import Message

from kafka_patterns.clients import postgres
from kafka_patterns.jobs import base, client
from kafka_patterns.runtime import dead_letters, readings, schema_check
from kafka_patterns.runtime.fault_hooks import CRASH_EXIT_CODE

DDL = "CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL PRIMARY KEY, run TEXT, sensor TEXT, seq BIGINT)"


def rows(msgs: list[Message], check: schema_check.SchemaCheck | None = None
         ) -> tuple[list[tuple[str, str, int]], list[tuple[Message, str]]]:
    """(run, sensor, seq) of the valid readings among the records, and the others with
    the reason they are not readings (the contract's, or their schema tag's: `check`)."""
    good, bad = readings.split(msgs, check)
    return [(r.run, r.sensor, r.seq) for _, r in good], bad


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--work-seconds", type=float, default=0.0,
                   help="simulated processing time per batch, after its commit (lets the fault tests kill it there)")
    args = p.parse_args(argv)
    postgres.ensure(DDL, table=job.table)
    consumer = client.group_consumer(args)
    consumer.subscribe(list(job.inputs))
    letters = dead_letters.DeadLetters(job.name, job.deadletter_topic)
    (source,) = job.inputs
    check = schema_check.for_topic(source)
    # Fault injection for the tests: die right after the Nth commit, before processing.
    crash_after = int(os.environ.get("KP_CRASH_AFTER_COMMIT", "0"))
    commits = 0

    def commit_then_process(msgs: list[Message]) -> None:
        nonlocal commits
        consumer.commit(asynchronous=False)  # at-most-once: the position is committed first
        commits += 1
        if commits == crash_after:
            os._exit(CRASH_EXIT_CODE)
        if args.work_seconds:
            time.sleep(args.work_seconds)  # the batch's "processing": committed, not yet written
        good, bad = rows(msgs, check)
        for m, reason in bad:
            letters.send(m, reason)
        letters.flush()
        with postgres.connect() as conn:
            postgres.insert_rows(conn, job.table, ("run", "sensor", "seq"), good)

    try:
        client.poll_loop(consumer, commit_then_process, args.batch, args.max_idle_seconds)
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

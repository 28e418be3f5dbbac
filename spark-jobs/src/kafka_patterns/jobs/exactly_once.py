"""exactly-once (Spark): a replayable source (Kafka offsets in the checkpoint), and a
transactional sink: each micro-batch's rows and its batch id are written to
PostgreSQL in ONE transaction, and a batch id already committed is skipped. A job
hard-killed after the write but before its checkpoint commit replays the batch with
the same id and offsets; the ledger turns the replay into a no-op.

    python -m kafka_patterns.jobs.exactly_once [--available-now]
"""

from __future__ import annotations

import sys

from kafka_patterns.jobs.readings_to_postgres import run_to_postgres


def main(argv: list[str] | None = None) -> int:
    # No unique key on its table: the ledger alone makes it exactly-once, and the fault
    # test (a crash after the sink write, then replays) proves that with nothing to hide
    # a duplicate. A reading produced twice is two records here, stored twice.
    return run_to_postgres("exactly-once", argv, __doc__, exactly_once=True, unique_readings=False)


if __name__ == "__main__":
    sys.exit(main())

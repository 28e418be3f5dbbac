"""one-to-one: one producer, one topic, one consumer job writing every reading to
PostgreSQL (table `readings`), exactly once per record (foreachBatch + batch ledger)
and once per reading: the same (run, sensor, seq) produced twice is stored once (a
unique index; the duplicate is counted in the job's log).

    python -m kafka_patterns.jobs.one_to_one [--available-now]
"""

from __future__ import annotations

import sys

from kafka_patterns.jobs.readings_to_postgres import run_to_postgres

JOB = "one-to-one"


def main(argv: list[str] | None = None) -> int:
    return run_to_postgres(JOB, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())

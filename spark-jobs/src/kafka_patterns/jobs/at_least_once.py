"""at-least-once: acks=all producer, the Spark job commits after processing (its
checkpoint records a batch only after the foreachBatch write): a job killed between
the write and the checkpoint commit replays that batch. Nothing is lost; duplicates
are possible and counted.

    python -m kafka_patterns.jobs.at_least_once [--available-now]
"""

from __future__ import annotations

import sys

from kafka_patterns.jobs.readings_to_postgres import run_to_postgres


def main(argv: list[str] | None = None) -> int:
    # exactly_once=False: the plain foreachBatch, no batch ledger.
    return run_to_postgres("at-least-once", argv, __doc__, exactly_once=False)


if __name__ == "__main__":
    sys.exit(main())

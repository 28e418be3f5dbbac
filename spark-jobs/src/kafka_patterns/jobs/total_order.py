"""single partition, total order: readings through a 1-partition topic keep one
global order (Kafka orders within a partition; one partition orders everything).
Written to PostgreSQL exactly once per record, in offset order.

    python -m kafka_patterns.jobs.total_order [--available-now]
"""

from __future__ import annotations

import sys

from kafka_patterns.jobs.readings_to_postgres import run_to_postgres


def main(argv: list[str] | None = None) -> int:
    return run_to_postgres("total-order", argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())

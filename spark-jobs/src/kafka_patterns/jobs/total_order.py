"""single partition, total order: readings through a 1-partition topic keep one
global order (Kafka orders within a partition; one partition orders everything).
Written to PostgreSQL exactly once per record, in offset order.

    python -m kafka_patterns.jobs.total_order [--available-now]
"""

from __future__ import annotations

import sys

from kafka_patterns import pg, spark
from kafka_patterns.jobs import base, one_to_one

JOB = "total-order"
TABLE = base.output_table(JOB)
DDL = one_to_one.DDL.replace(f"EXISTS {one_to_one.TABLE} (", f"EXISTS {TABLE} (")


def main(argv: list[str] | None = None) -> int:
    args = base.parser(JOB, __doc__).parse_args(argv)
    pg.ensure(pg.LEDGER_DDL, DDL)
    session = spark.session(JOB)
    records = spark.read_stream(session, base.input_topics(JOB), args.starting_offsets, **base.source_options(args))
    rows = one_to_one.to_rows(spark.valid_readings(records))
    sink = base.postgres_batch_sink(base.checkpoint_dir(JOB, args), TABLE, one_to_one.COLUMNS)
    base.await_all([base.start(rows.writeStream.foreachBatch(sink), JOB, args)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""sql-stream: a stream defined in SQL (KSQL-style). This module only wires the source
and the sink around the Spark SQL query the catalogue job names (`sql:`):

    python -m kafka_patterns.jobs.sql_stream --job sql-station-heat-windows [--available-now]

Source: the job's inputs, each record parsed by the reading contract; the bad ones go
to the job's dead letters with their reason, the valid ones (plus `event_time`, their
`ts` as a timestamp) are the view `readings` the query reads from. Sink: each row the
query returns is one record of the job's one output topic, keyed by its `key` column,
valued by a JSON object of all its columns; append mode, so a row is written once and
final (an aggregate declares its watermark in the SQL). The convention is written out
for the query's author at the top of each .sql file and in the catalogue.

Nothing here knows a query: a new SQL stream is a catalogue job and a .sql file.

Guarantee: nothing lost (the checkpoint records the offsets read only after the
output is written). The Kafka sink is at-least-once: a micro-batch replayed after a
crash writes its rows again, counted as duplicates.
"""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark

VIEW = "readings"  # what the queries read FROM
KEY = "key"  # the column a query selects as the output record's key


def query_text(job: catalogue.Job) -> str:
    """The job's SQL, as its catalogue entry names it."""
    return job.sql_file.read_text()


def run_sql(session: SparkSession, readings: DataFrame, sql: str) -> DataFrame:
    """The query's result over `readings` (valid readings, parsed), seen by it as the
    view `readings` (pure; streaming in, streaming out). The view is dropped again once
    the query is analysed: the result keeps its plan, and jobs sharing a session (make
    demo runs them all in one) find no view of another."""
    readings.withColumn("event_time", spark.event_time(F.col("ts"))).createOrReplaceTempView(VIEW)
    try:
        return session.sql(sql)
    finally:
        session.catalog.dropTempView(VIEW)


def to_records(result: DataFrame, topic: str) -> DataFrame:
    """A query's rows -> Kafka sink rows: key = its `key` column, value = the JSON object
    of all its columns (pure). A query without a `key` column fails naming it."""
    if KEY not in result.columns:
        raise ValueError(f"the SQL selects no {KEY!r} column (it selects {', '.join(result.columns)}): "
                         f"select the output record's key AS {KEY}")
    return result.select(F.lit(topic).alias("topic"), F.col(KEY).cast("string").alias("key"),
                         F.to_json(F.struct(*[F.col(f"`{c}`") for c in result.columns])).alias("value"))


def output_topic(job: catalogue.Job) -> str:
    if len(job.output_topics) != 1 or len(job.outputs) != 1:
        raise SystemExit(f"catalogue jobs.{job.name}.outputs: an SQL stream writes one topic, "
                         f"found {list(job.outputs)}")
    return job.output_topics[0]


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = base.parser(job, __doc__).parse_args(argv)
    topic, sql = output_topic(job), query_text(job)
    session = spark.session(job.name)
    records = spark.read_stream(session, list(job.inputs), args.starting_offsets, **base.source_options(args))
    readings, letters = base.valid_readings(records, job, args)
    rows = to_records(run_sql(session, readings, sql), topic)
    writer = rows.writeStream.outputMode("append").format("kafka").options(**spark.kafka_sink_options())
    base.await_all([letters, base.start(writer, job, args)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

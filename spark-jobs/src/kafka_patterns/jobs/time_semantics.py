"""time semantics: the same readings counted in 10-second windows of three clocks.

    python -m kafka_patterns.jobs.time_semantics --job time-semantics [--available-now]

- event time: the reading's own `ts` (when the sensor measured), read from
  weather.readings, with a 30-second watermark: a window is final once the largest
  event time seen passes its end by 30 s; an event arriving later than that for its
  window is dropped and counted (Spark's numRowsDroppedByWatermark, logged and kept
  in LATE_DROPPED per checkpoint), never silently merged into a closed window.
- ingestion time: the broker's timestamp of weather.readings.ingest, a LogAppendTime
  topic: the broker stamps each record when it appends it, whatever timestamp the
  producer set; a late event lands in the window of its arrival.
- processing time: the clock of the Spark micro-batch that handles the record.

Each semantics is its own streaming query (update mode) writing window counts to
PostgreSQL `time_windows` (run, semantics, window_start, window_end, n) with an
upsert: a replayed micro-batch rewrites the same count, so the table is exactly-once.
Malformed readings are not counted (the pipeline's clean stage dead-letters them).
"""

from __future__ import annotations

import json
import logging
import sys

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark

WINDOW = "10 seconds"
WINDOW_MS = 10_000
WATERMARK = "30 seconds"
WATERMARK_MS = 30_000
SEMANTICS = ("event", "ingestion", "processing")
COLUMNS = ("run", "semantics", "window_start", "window_end", "n")
DDL = """CREATE TABLE IF NOT EXISTS {table} (
    run TEXT NOT NULL, semantics TEXT NOT NULL, window_start BIGINT NOT NULL, window_end BIGINT NOT NULL,
    n BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run, semantics, window_start))"""
UPSERT = f"""INSERT INTO {{table}} ({', '.join(COLUMNS)}) VALUES (%s, %s, %s, %s, %s)
    ON CONFLICT (run, semantics, window_start) DO UPDATE SET n = EXCLUDED.n, updated_at = now()"""
# Rows dropped by the event-time watermark, per checkpoint directory (this process's runs).
LATE_DROPPED: dict[str, int] = {}
log = logging.getLogger("kafka_patterns.jobs.time_semantics")


def clock(readings: DataFrame, semantics: str) -> Column:
    """The time column of a semantics, on parsed readings (kafka_ts = the record's timestamp)."""
    if semantics == "event":
        return spark.event_time(F.col("ts"))
    if semantics == "ingestion":
        return F.col("kafka_ts")
    if semantics == "processing":
        return F.current_timestamp()
    raise ValueError(f"unknown time semantics {semantics!r}; one of {SEMANTICS}")


def windowed_counts(readings: DataFrame, semantics: str) -> DataFrame:
    """Count readings per run and 10-second window of the semantics' clock, with the
    watermark on that clock (pure; the watermark matters on a stream only)."""
    timed = readings.withColumn("t", clock(readings, semantics)).withWatermark("t", WATERMARK)
    counts = timed.groupBy(F.window("t", WINDOW).alias("w"), "run").agg(F.count(F.lit(1)).alias("n"))
    return counts.select("run", F.lit(semantics).alias("semantics"),
                         (F.unix_micros(F.col("w.start")) / 1000).cast("long").alias("window_start"),
                         (F.unix_micros(F.col("w.end")) / 1000).cast("long").alias("window_end"), "n")


def topic_of(job: catalogue.Job) -> dict[str, str]:
    """The input each semantics windows: ingestion time the job's LogAppendTime topic
    (the broker stamps its records), event and processing time the other one."""
    stamped = [t for t in job.inputs if catalogue.topics()[t].config.get("message.timestamp.type") == "LogAppendTime"]
    produced = [t for t in job.inputs if t not in stamped]
    if len(stamped) != 1 or len(produced) != 1:
        raise catalogue.CatalogueError(f"{catalogue.CATALOGUE_FILE.name}: jobs.{job.name}.inputs: expected one "
                                       "topic with message.timestamp.type LogAppendTime (ingestion time) and one "
                                       f"without (event and processing time), found {list(job.inputs)}")
    return {"event": produced[0], "ingestion": stamped[0], "processing": produced[0]}


def upsert(table: str, rows: list[tuple]) -> None:
    with postgres.connect() as conn, conn.cursor() as cur:
        cur.executemany(UPSERT.format(table=table), rows)


def dropped_by_watermark(query) -> int:
    return sum(op.get("numRowsDroppedByWatermark", 0)
               for p in query.recentProgress for op in (p.get("stateOperators") or []))


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = base.parser(job, __doc__).parse_args(argv)
    postgres.ensure(DDL, table=job.table)
    session = spark.session(job.name)
    topics = topic_of(job)

    def sink(batch_df, _batch_id: int) -> None:
        upsert(job.table, [tuple(r) for r in batch_df.select(*COLUMNS).toLocalIterator()])

    queries, lettered = {}, set()
    for semantics in SEMANTICS:
        topic = topics[semantics]
        # startingOffsets JSON may name both topics; each query takes its own topic's part.
        starting = args.starting_offsets
        if starting.startswith("{"):
            starting = json.dumps({topic: json.loads(starting)[topic]})
        records = spark.read_stream(session, [topic], starting, **base.source_options(args))
        if topic in lettered:  # another query of this topic sends its dead letters
            readings = spark.valid_readings(records)
        else:
            readings, queries[f"{topic}-deadletters"] = base.valid_readings(records, job, args,
                                                                            f"{semantics}-deadletters")
            lettered.add(topic)
        counts = windowed_counts(readings, semantics)
        queries[semantics] = base.start(counts.writeStream.outputMode("update").foreachBatch(sink), job, args,
                                        query=semantics)
    base.await_all(list(queries.values()))
    late = dropped_by_watermark(queries["event"])
    LATE_DROPPED[base.checkpoint_dir(job, args, "event")] = late
    log.warning("%s: %d late events dropped by the event-time watermark (%s)", job.name, late, WATERMARK)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""pipes and filters: a 3-stage pipeline and its sink, each stage its own catalogue
job with its stage in its `args` (--stage clean|enrich|aggregate|sink):

    python -m kafka_patterns.jobs.pipeline --job pipeline-clean     [--available-now]
    python -m kafka_patterns.jobs.pipeline --job pipeline-enrich    [--available-now]
    python -m kafka_patterns.jobs.pipeline --job pipeline-aggregate [--available-now]
    python -m kafka_patterns.jobs.pipeline --job pipeline-sink      [--available-now]

weather.readings --clean--> weather.readings.cleaned (malformed -> weather.deadletter,
reason in the `reason` header) --enrich--> weather.readings.enriched (joined with the
station's profile from the compacted topic user.profiles, keyed by station; what
breaks the reading contract -> weather.deadletter as in clean)
--aggregate--> weather.readings.aggregated (count/sum/min/max per run, station and
10-second event-time window, 1-minute watermark, update mode) --sink--> PostgreSQL
station_aggregates. No stage reads the topic it writes; the topics between stages
decouple them (each can stop, restart or scale on its own). Each stage is one streaming
query: a stage's dead letters leave in the same pass as its output (one read of the
input per micro-batch, not a second query over the same records).

Guarantees: no stage loses a record (Spark checkpoints the offsets a stage has read
only after its output is written). The Kafka sinks of the three stages are
at-least-once: a replayed micro-batch is written twice, duplicates are counted. The
aggregate stage absorbs them: it drops a reading (run, sensor, seq) it has already
counted (kept in state until the watermark passes it), so a reading delivered twice
counts once. It emits the current value of a window (update mode), so a window has
several versions downstream; the sink keeps the one with the highest count per (run,
station, window) by an upsert that never lowers a count: replays and duplicates are
idempotent, the PostgreSQL result is exactly-once. Events later than the watermark are
dropped by the aggregate stage (the pipeline scenario has none; the time-semantics
pattern shows and counts them).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base
from kafka_patterns.runtime import lookups, spark
from kafka_patterns.runtime.readings import FIELDS, spark_schema

STAGES = ("clean", "enrich", "aggregate", "sink")
# The aggregate's event-time window and watermark, in ms (the Kafka Streams peer reads
# them as they are, bench.streams_peer.rules), and as Spark's interval strings.
WINDOW_MS = 10_000
WATERMARK_MS = 60_000
WINDOW = f"{WINDOW_MS // 1000} seconds"
WATERMARK = f"{WATERMARK_MS // 1000} seconds"
PROFILE_FIELDS = ("name", "region", "elevation_m")
AGG_FIELDS = ("run", "station", "region", "window_start", "window_end", "n", "temperature_sum",
              "temperature_min", "temperature_max")
SINK_COLUMNS = AGG_FIELDS
DDL = """CREATE TABLE IF NOT EXISTS {table} (
    run TEXT NOT NULL, station TEXT NOT NULL, region TEXT, window_start BIGINT NOT NULL, window_end BIGINT,
    n BIGINT, temperature_sum DOUBLE PRECISION, temperature_min DOUBLE PRECISION,
    temperature_max DOUBLE PRECISION, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run, station, window_start))"""
UPSERT = f"""INSERT INTO {{table}} ({', '.join(SINK_COLUMNS)}) VALUES ({', '.join(['%s'] * len(SINK_COLUMNS))})
    ON CONFLICT (run, station, window_start) DO UPDATE SET
    region = EXCLUDED.region, window_end = EXCLUDED.window_end, n = EXCLUDED.n,
    temperature_sum = EXCLUDED.temperature_sum, temperature_min = EXCLUDED.temperature_min,
    temperature_max = EXCLUDED.temperature_max, updated_at = now()
    WHERE EXCLUDED.n > {{table}}.n"""


def profile_schema() -> StructType:
    return StructType([StructField("station", StringType()), StructField("name", StringType()),
                       StructField("region", StringType()), StructField("elevation_m", DoubleType())])


def enriched_schema() -> StructType:
    return StructType([*spark_schema().fields, *[f for f in profile_schema().fields if f.name != "station"]])


def aggregate_schema() -> StructType:
    types = {"n": LongType(), "window_start": LongType(), "window_end": LongType(),
             "temperature_sum": DoubleType(), "temperature_min": DoubleType(), "temperature_max": DoubleType()}
    return StructType([StructField(f, types.get(f, StringType())) for f in AGG_FIELDS])


# --- stage 1: clean -----------------------------------------------------------------

def clean(parsed: DataFrame, cleaned_topic: str, deadletter_topic: str, job: str) -> DataFrame:
    """parse_readings rows -> Kafka sink rows: valid readings unchanged to the cleaned
    topic, malformed ones to the dead-letter topic with the reason in a header (pure)."""
    stage = F.array(spark.kafka_header("stage", F.lit("clean")))
    return spark.route_rows(parsed, [(cleaned_topic, F.lit(True), stage)], deadletter_topic, job)


# --- stage 2: enrich ----------------------------------------------------------------

def latest_profiles(records: DataFrame) -> DataFrame:
    """Kafka records of the compacted profile topic -> the current profile per station:
    the last value per key wins, a tombstone (null value) deletes (pure)."""
    last = Window.partitionBy("key").orderBy(F.col("partition").desc(), F.col("offset").desc())
    latest = (records.select(F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("value"),
                             "partition", "offset")
              .withColumn("i", F.row_number().over(last)).where("i = 1").where(F.col("value").isNotNull()))
    return (latest.select(F.from_json("value", profile_schema()).alias("p")).select("p.*")
            .where(F.col("station").isNotNull()))


def enrich(parsed: DataFrame, profiles: DataFrame, topic: str, deadletter_topic: str, job: str) -> DataFrame:
    """parse_readings rows + current profiles -> Kafka sink rows in one pass: a valid
    reading joined with its station's profile to the enriched topic (null profile
    fields for a station without one), a record that breaks the contract unchanged to
    the dead-letter topic with its reason in the headers. One query, not a second one
    for the dead letters reading the same source again (pure)."""
    joined = parsed.join(F.broadcast(profiles), "station", "left")
    valid = F.col("error").isNull()
    value = F.to_json(F.struct(*FIELDS, *PROFILE_FIELDS)).cast("binary")
    headers = F.array(spark.kafka_header("stage", F.lit("enrich")))
    letter = spark.dead_letter(joined, job)
    return joined.select(F.when(valid, F.lit(topic)).otherwise(F.lit(deadletter_topic)).alias("topic"),
                         F.when(valid, F.col("sensor")).otherwise(letter["key"]).alias("key"),
                         F.when(valid, value).otherwise(letter["value"]).alias("value"),
                         F.when(valid, headers).otherwise(letter["headers"]).alias("headers"))


# --- stage 3: aggregate -------------------------------------------------------------

def parse_enriched(records: DataFrame) -> DataFrame:
    parsed = records.select(F.from_json(F.col("value").cast("string"), enriched_schema()).alias("r")).select("r.*")
    return parsed.where(F.col("run").isNotNull() & F.col("ts").isNotNull() & F.col("station").isNotNull())


def aggregate(enriched: DataFrame, topic: str) -> DataFrame:
    """Enriched readings -> per (run, station, region, event-time window) count, sum,
    min and max of the distinct readings (a duplicate from upstream counts once), as
    Kafka sink rows keyed by run|station|window start (pure; streaming: watermark on
    event time, late events beyond it dropped)."""
    with_time = enriched.withColumn("event_time", spark.event_time(F.col("ts"))).withWatermark("event_time",
                                                                                               WATERMARK)
    # A reading the at-least-once stages upstream delivered twice is dropped before it is
    # counted: its (run, sensor, seq) is kept in state until the watermark passes its event
    # time (a copy carries the same event time, which as a key lets Spark evict it). Not a
    # set of readings per window in the aggregation's state, which every micro-batch read
    # and rewrote whole for each window it touched.
    distinct = with_time.dropDuplicates(["run", "sensor", "seq", "event_time"])
    agg = distinct.groupBy(F.window("event_time", WINDOW).alias("w"), "run", "station", "region").agg(
        F.count(F.lit(1)).alias("n"), F.sum("temperature").alias("temperature_sum"),
        F.min("temperature").alias("temperature_min"), F.max("temperature").alias("temperature_max"))
    rows = agg.select(*[F.col(c) for c in ("run", "station", "region")],
                      (F.unix_micros(F.col("w.start")) / 1000).cast("long").alias("window_start"),
                      (F.unix_micros(F.col("w.end")) / 1000).cast("long").alias("window_end"),
                      "n", "temperature_sum", "temperature_min", "temperature_max")
    return rows.select(F.lit(topic).alias("topic"),
                       F.concat_ws("|", "run", "station", F.col("window_start").cast("string")).alias("key"),
                       F.to_json(F.struct(*AGG_FIELDS)).alias("value"))


# --- sink ---------------------------------------------------------------------------

def window_versions(records: DataFrame) -> DataFrame:
    """Kafka records of window aggregates -> their rows (SINK_COLUMNS), every version
    as it came (pure)."""
    return (records.select(F.from_json(F.col("value").cast("string"), aggregate_schema()).alias("a")).select("a.*")
            .where(F.col("run").isNotNull() & F.col("window_start").isNotNull()).select(*SINK_COLUMNS))


def final_versions(rows: Iterable[Sequence]) -> list[tuple]:
    """Window versions (SINK_COLUMNS) -> one per (run, station, window start): the
    version with the highest count (counts only grow; duplicates collapse) (pure). A
    sink batch holds a few versions per station window: reduced here, in the driver,
    not by a Spark window function and the shuffle it would run per micro-batch."""
    key, n = [SINK_COLUMNS.index(c) for c in ("run", "station", "window_start")], SINK_COLUMNS.index("n")
    best: dict[tuple, tuple] = {}
    for row in map(tuple, rows):
        k = tuple(row[i] for i in key)
        if k not in best or (row[n] or 0) > (best[k][n] or 0):
            best[k] = row
    return list(best.values())


def upsert(table: str, rows: list[tuple]) -> None:
    with postgres.connect() as conn, conn.cursor() as cur:
        cur.executemany(UPSERT.format(table=table), rows)


# --- I/O ----------------------------------------------------------------------------

def kafka_writer(df: DataFrame, job: catalogue.Job, args, stateless: bool = True):
    """A stage's Kafka sink: a stateless stage appends, the aggregate updates its windows."""
    writer = df.writeStream.outputMode("append" if stateless else "update").format("kafka")
    return base.start(writer.options(**spark.kafka_sink_options()), job, args, stateless_kafka_sink=stateless)


def parser(job: catalogue.Job) -> base.JobParser:
    p = base.parser(job, __doc__)
    p.add_argument("--stage", choices=STAGES, required=True, help="which stage this job is")
    return p


def stage_of(job: catalogue.Job) -> str:
    """The stage a pipeline job runs, as its catalogue args say."""
    return parser(job).parse_args([]).stage


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = parser(job).parse_args(argv)
    inputs, outputs = list(job.inputs), job.output_topics
    session = spark.session(job.name)
    records = spark.read_stream(session, inputs, args.starting_offsets, **base.source_options(args))
    queries, lookup = [], None
    if args.stage == "clean":
        (cleaned,) = outputs
        queries.append(kafka_writer(clean(spark.parse_readings(records), cleaned, job.deadletter_topic, job.name),
                                    job, args))
    elif args.stage == "enrich":
        # Stream-static join with the profiles as cached: read again when the profile
        # topic grows (kafka_patterns.runtime.lookups), not for every micro-batch. Cached as one
        # partition: each micro-batch broadcasts it again, a job of one task, not one
        # per shuffle partition.
        (enriched,) = outputs
        lookup = lookups.CachedLookup(session, job.lookups, lambda r: latest_profiles(r).coalesce(1))
        queries.append(kafka_writer(enrich(spark.parse_readings(records), lookup.table, enriched,
                                           job.deadletter_topic, job.name), job, args))
    elif args.stage == "aggregate":
        base.refuse_real_time(job, args, "the aggregate stage keeps windows in state")
        (aggregated,) = outputs
        queries.append(kafka_writer(aggregate(parse_enriched(records), aggregated), job, args, stateless=False))
    else:
        base.refuse_real_time(job, args, "the sink stage writes PostgreSQL with foreachBatch")
        postgres.ensure(DDL, table=job.table)

        def sink(batch_df, _batch_id: int) -> None:
            # A batch holds a few window versions per station: one collect of the parsed
            # records (a job without a shuffle), reduced in the driver.
            upsert(job.table, final_versions(batch_df.collect()))

        # Parsed in the streaming query, planned once: built per batch in the Python
        # callback, the same plan took 0.6 s of py4j calls per batch (make bench).
        queries.append(base.start(window_versions(records).writeStream.foreachBatch(sink), job, args))
    try:
        base.await_all(queries)
    finally:
        if lookup is not None:
            lookup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

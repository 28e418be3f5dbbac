"""The Spark edges shared by the jobs: a session with the Kafka connector on the
classpath, Kafka source options, and reading JSON readings out of Kafka records.

Locally the connector jars come from the cache `make setup` fills
(.cache/spark-kafka-<version>/, nothing is downloaded at job start); in the Spark
image they are baked into $SPARK_HOME/jars and SPARK_KAFKA_JARS is unset.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_patterns.clients import kafka
from kafka_patterns.config.catalogue import ROOT, versions
from kafka_patterns.runtime import dead_letters, readings, schema_tags, streaming_metrics


def _artifact(jar: Path) -> str:
    """kafka-clients-3.9.2.jar -> kafka-clients"""
    return re.sub(r"-\d[\w.]*$", "", jar.stem)


def connector_jars() -> list[Path]:
    """The cached connector jars that pyspark does not ship itself (the cache also holds
    transitive jars such as scala-library whose pyspark copy must win)."""
    import pyspark

    cache = ROOT / ".cache" / f"spark-kafka-{versions()['spark_version']}"
    jars = sorted(cache.glob("*.jar"))
    if not jars:
        raise FileNotFoundError(f"no Spark Kafka connector jars in {cache}: run `make setup`")
    shipped = {_artifact(j) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return [j for j in jars if _artifact(j) not in shipped]


# Where the local driver JVM writes its output, when a command sets it (log_driver_to).
_driver_log: Path | None = None


def log_driver_to(path: Path) -> None:
    """The local driver JVM of this process writes its stdout and stderr to `path`, not
    to the terminal: `make demo` and `make bad-input` print a table, and the JVM's
    start-up lines (the incubator-module warning, which no JVM flag silences, the
    native-hadoop notice, the log4j profile) and Spark's routine WARNs belong in a log."""
    global _driver_log
    _driver_log = path


LOG4J2_CONFIG = Path(__file__).with_name("log4j2.properties")
# The local driver's scratch space (java.io.tmpdir, and so spark.local.dir: block manager,
# pyspark and artifact directories, lz4-java's native library) is in the project's run
# directory, not /tmp: a driver killed by SIGKILL (the fault matrix does it on purpose)
# cannot remove it, and `make clean` then does.
LOCAL_TMP_DIR = ROOT / ".run" / "tmp" / "spark"
CHECKPOINT_FILE_MANAGER = "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"


def local_conf() -> dict[str, str]:
    """Local mode in this process: small shuffles, no UI, the cached connector jars,
    bound to loopback like the rest of the local cluster, our log4j2 settings."""
    return {"spark.master": os.environ.get("SPARK_MASTER", "local[2]"),
            "spark.ui.showConsoleProgress": "false",
            "spark.jars": ",".join(str(j) for j in connector_jars()),
            "spark.sql.shuffle.partitions": "3",
            # Adaptive execution: streaming and stateful queries turn it off anyway (with a
            # warning per query), and with 3 shuffle partitions on 2 cores it has nothing
            # to coalesce in the batch jobs.
            "spark.sql.adaptive.enabled": "false",
            # One process runs many queries (make demo runs every pattern in one session):
            # Spark's pool of cached Kafka consumers is 64 by default and warns each time a
            # query pushes it past that.
            "spark.kafka.consumer.cache.capacity": "256",
            "spark.ui.enabled": "false",
            "spark.sql.session.timeZone": "UTC",
            # A plan's text keeps 25 fields by default and Spark warns once per process
            # when it cuts one (the demo's readings with their Kafka columns have more).
            "spark.sql.debug.maxToStringFields": "100",
            # Checkpoint files (offset and commit logs, state store deltas) through Hadoop's
            # FileSystem API, not FileContext: without Hadoop's native library the local file
            # system forks a `chmod` or `readlink` process for nearly every call, and
            # FileContext makes ten such calls per file written, FileSystem two (make bench:
            # 46 -> 15 ms per checkpoint file; a stateful batch's state commit 330-1,300 ->
            # 50 ms). Renames on a local disk are atomic (rename(2)) either way.
            "spark.sql.streaming.checkpointFileManagerClass": CHECKPOINT_FILE_MANAGER,
            # Not spark-warehouse/ in whatever directory the process started from.
            "spark.sql.warehouse.dir": str(ROOT / ".run" / "spark-warehouse"),
            "spark.driver.extraJavaOptions": f"-Djava.net.preferIPv4Stack=true "
                                             f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()} "
                                             f"-Djava.io.tmpdir={LOCAL_TMP_DIR} "
                                             + os.environ.get("KP_DRIVER_JAVA_OPTIONS", "")}


def _launch_logging_driver(conf: dict[str, str], log: Path) -> None:
    """Start the driver JVM (the py4j gateway) with its output in `log`, before the
    session would start it on the terminal; the session then uses this gateway."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:  # the JVM keeps its own copy of the descriptor
        gateway = launch_gateway(SparkConf(loadDefaults=False).setAll(conf.items()),
                                 popen_kwargs={"stdout": out, "stderr": subprocess.STDOUT})
    SparkContext._ensure_initialized(gateway=gateway)


# Threads that start jobs at once (the bench's JobThreads, a scenario's stages) share one
# session: without the lock each found none yet and launched a driver JVM of its own.
_session_lock = threading.Lock()


def session(app_name: str) -> SparkSession:
    """The active session, or a new local one (spark-submit/the operator set the master).
    A new session exports its streaming progress as Prometheus metrics of job `app_name`
    when KP_METRICS_PORT is set (streaming_metrics)."""
    with _session_lock:
        return _session(app_name)


def _session(app_name: str) -> SparkSession:
    # The active session of this thread, else the process's (a scenario's thread): asking
    # the builder for it again would warn that its settings cannot apply any more.
    active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if active is not None and active.sparkContext._jsc is not None:  # not stopped
        return active
    builder = SparkSession.builder.appName(app_name)
    local = "SPARK_HOME" not in os.environ
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        conf = local_conf()
        LOCAL_TMP_DIR.mkdir(parents=True, exist_ok=True)  # the JVM does not create it
        for key, value in conf.items():
            builder = builder.config(key, value)
        if _driver_log is not None:
            _launch_logging_driver(conf, _driver_log)
    spark = builder.getOrCreate()
    # A local driver without its own log shares a terminal (a job run by hand, a test's
    # job log) where Spark's routine warnings (AQE off for streaming, state store
    # snapshots, consumer pool sizes) drown the output; errors still show. In a pod, or
    # with the driver's own log, WARN is kept.
    default = "ERROR" if local and _driver_log is None else "WARN"
    spark.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", default))
    streaming_metrics.install(spark, app_name)
    return spark


def java_client_settings(librdkafka: dict[str, str]) -> dict[str, str]:
    """librdkafka-style client settings (what KAFKA_CLIENT_* gives confluent-kafka) in the
    Java client's terms: SCRAM credentials become sasl.jaas.config, a PEM CA file
    becomes a PEM truststore; settings both clients share pass through unchanged."""
    out = dict(librdkafka)
    user, password = out.pop("sasl.username", None), out.pop("sasl.password", None)
    if user is not None:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule"
                  if out.get("sasl.mechanism", "").upper() == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
        out["sasl.jaas.config"] = f'{module} required username="{user}" password="{password or ""}";'
    ca = out.pop("ssl.ca.location", None)
    if ca is not None:
        out.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": ca})
    return out


def kafka_options() -> dict[str, str]:
    """Bootstrap servers and the client's security settings, in the source's kafka.* form."""
    return {"kafka.bootstrap.servers": kafka.bootstrap_servers(),
            **{f"kafka.{k}": v for k, v in java_client_settings(kafka.security_settings()).items()}}


def kafka_sink_options() -> dict[str, str]:
    """kafka_options for a Kafka sink, whose producer lingers 5 ms as Kafka 4's does by
    default: Spark 4.2 brings kafka-clients 3.9 (linger.ms 0), whose producer sends a
    real-time query's records one request at a time, each Produce costing two follower
    fetches on the brokers (a micro-batch task's flush at its end sends at once)."""
    return {**kafka_options(), "kafka.linger.ms": "5"}


# The type of the Kafka source's `headers` column and of the Kafka sink's.
KAFKA_HEADERS = "array<struct<key:string,value:binary>>"


def _headers_option(topics: list[str]) -> dict[str, str]:
    return {"includeHeaders": "true"} if schema_tags.checked(topics) else {}


def read_stream(spark: SparkSession, topics: list[str], starting_offsets: str = "earliest",
                **options: str) -> DataFrame:
    """A streaming DataFrame over topics (startingOffsets applies to a new checkpoint only),
    with the records' headers where their schema tags are checked (parse_readings)."""
    return (spark.readStream.format("kafka").options(**kafka_options())
            .option("subscribe", ",".join(topics)).option("startingOffsets", starting_offsets)
            .options(**_headers_option(topics), **options).load())


# A bounded read wants throughput: fetches of up to 4 MB per partition (the consumer's
# default is 1 MB), a 1 MB socket buffer (64 KB) and 5,000 records per poll (500) read
# 2-3 times the records/s of the defaults here (make bench: Spark source against
# ConsumerPerformance). Larger (10 MB, 100,000 records per poll) ran a local driver's
# heap out of memory with six partitions read at once.
BATCH_READ_OPTIONS = {"kafka.max.partition.fetch.bytes": "4194304", "kafka.receive.buffer.bytes": "1048576",
                      "kafka.max.poll.records": "5000"}


def read_batch(spark: SparkSession, topics: list[str], starting: str | dict = "earliest",
               ending: str | dict = "latest", **options: str) -> DataFrame:
    """A bounded read of an offset range (dicts are {topic: {partition: offset}}), with
    the records' headers where tags are checked, and BATCH_READ_OPTIONS unless `options`
    say otherwise."""
    def as_option(o):
        return o if isinstance(o, str) else json.dumps({t: {str(p): v for p, v in ps.items()} for t, ps in o.items()})

    return (spark.read.format("kafka").options(**kafka_options())
            .option("subscribe", ",".join(topics)).option("startingOffsets", as_option(starting))
            .option("endingOffsets", as_option(ending))
            .options(**{**BATCH_READ_OPTIONS, **_headers_option(topics), **options}).load())


def event_time(ts_ms: Column) -> Column:
    return (ts_ms / 1000).cast("timestamp")


# JSON types as Spark's variant names them (schema_of_variant), per contract kind.
# Integers beyond 64 bits and integral decimals (7.0) are DECIMAL(p,0) there: numbers.
_INTEGER_TYPES = "^(BIGINT|INT|SMALLINT|TINYINT)$"
_NUMBER_TYPES = "^(BIGINT|INT|SMALLINT|TINYINT|DECIMAL\\([0-9]+,[0-9]+\\)|DOUBLE|FLOAT)$"
_SQL_TYPE = {"string": "string", "integer": "bigint", "number": "double"}


def _kind_column(name: str) -> str:
    return f"_kind_{name}"


def _field_probes() -> list[Column]:
    """For each reading field, over the column `v` (the value parsed as a variant): its
    JSON type as schema_of_variant names it (null where the field is missing) as
    _kind_column(name), and its value typed as the contract wants it (null where it is
    not one) under its own name."""
    kinds = [F.expr(f"schema_of_variant(variant_get(v, '$.{f}'))").alias(_kind_column(f)) for f in readings.FIELDS]
    typed = [F.expr(f"try_variant_get(v, '$.{f}', '{_SQL_TYPE[k]}')").alias(f) for f, k in readings.KINDS.items()]
    return kinds + typed


_JSON_WHITESPACE = (" ", "\t", "\n", "\r")
# A value whose only object is its root, strings aside (every reading the generator
# makes): one JSON text, depth 1, whatever the parser said; the scan below is skipped.
_FLAT_OBJECT = r"^[ \t\n\r]*\{[^\[\]{}]*\}[ \t\n\r]*$"


def _not_one_json_text() -> Column:
    """True where the value (parsed: `v` is not null) is not one JSON text of at most
    readings.MAX_DEPTH levels: Spark's parser reads the first value and ignores what
    follows it (trailing text, a second object), and takes up to 1,000 levels. A scan
    of the value with its strings blanked out counts the nesting and finds anything
    after the root value closed; the flat values of the generator skip it."""
    blanked = F.regexp_replace(F.col("value").cast("string"), readings.STRING_LITERAL, '"')

    def step(acc: Column, c: Column) -> Column:
        depth = acc["d"] + F.when(c.isin("[", "{"), 1).when(c.isin("]", "}"), -1).otherwise(0)
        blank = F.struct(acc["d"].alias("d"), acc["m"].alias("m"), acc["seen"].alias("seen"),
                         (acc["ended"] | (acc["seen"] & (acc["d"] == 0))).alias("ended"), acc["trail"].alias("trail"))
        # After a root scalar (a literal or number: seen at depth 0), a string, bracket or
        # separator starts something else: Spark's parser stops before it (`null]`).
        after_scalar = acc["seen"] & (acc["d"] == 0) & c.isin('"', "[", "]", "{", "}", ",", ":")
        token = F.struct(depth.alias("d"), F.greatest(acc["m"], depth).alias("m"), F.lit(True).alias("seen"),
                         (acc["ended"] | ((depth == 0) & c.isin("]", "}", '"'))).alias("ended"),
                         (acc["trail"] | acc["ended"] | after_scalar).alias("trail"))
        return F.when(c.isin(*_JSON_WHITESPACE), blank).otherwise(token)

    start = F.struct(F.lit(0).alias("d"), F.lit(0).alias("m"), F.lit(False).alias("seen"),
                     F.lit(False).alias("ended"), F.lit(False).alias("trail"))
    scan = F.aggregate(F.split(blanked, ""), start, step,
                       lambda acc: acc["trail"] | (acc["m"] > readings.MAX_DEPTH))
    return F.when(blanked.rlike(_FLAT_OBJECT), F.lit(False)).otherwise(scan)


def _contract_error() -> Column:
    """The reading contract of kafka_patterns.runtime.readings, as one Spark expression over the
    columns `value` (the record's bytes), `v` (the value parsed as a variant, which keeps
    each field's JSON type) and _field_probes (each field's type and typed value): the
    reason of the first failing check, the same checks in the same order with the same
    reasons as readings.validate; null for a valid reading."""
    value, v = F.col("value"), F.col("v")
    kind = {f: F.col(_kind_column(f)) for f in readings.FIELDS}
    missing = F.concat_ws(",", *[F.when(kind[f].isNull() | (kind[f] == "VOID"), F.lit(f)) for f in readings.FIELDS])
    error = (F.when(value.isNull(), F.lit("empty value"))
             .when(F.octet_length(value) > readings.MAX_VALUE_BYTES,
                   F.lit(f"larger than {readings.MAX_VALUE_BYTES} bytes"))
             .when(~F.expr("is_valid_utf8(cast(value as string))"), F.lit("not UTF-8"))
             .when(v.isNull() | _not_one_json_text(), F.lit("not JSON"))
             .when(~F.expr("schema_of_variant(v)").startswith("OBJECT"), F.lit("not a JSON object"))
             .when(missing != "", F.concat(F.lit("missing "), missing)))
    for name in readings.FIELDS:
        want, typed = readings.KINDS[name], F.col(name)
        if want == "string":
            is_kind = kind[name] == "STRING"
        else:
            is_kind = kind[name].rlike(_INTEGER_TYPES if want == "integer" else _NUMBER_TYPES)
        error = error.when(~is_kind, F.lit(f"{name} is not a{'n' if want == 'integer' else ''} {want}"))
        if want == "string":
            error = (error.when(~F.length(typed).between(1, readings.MAX_STRING),
                                F.lit(f"{name} is empty or longer than {readings.MAX_STRING} characters"))
                     .when(typed.rlike("[\\x00-\\x1F\\x7F]"), F.lit(f"{name} has a control character")))
        elif name in readings.RANGES:
            lo, hi = readings.RANGES[name]
            in_range = F.coalesce(typed.between(lo, hi), F.lit(False))  # null: no 64-bit value
            error = error.when(~in_range, F.lit(f"{name} out of range"))
    return error


def parse_readings(records: DataFrame) -> DataFrame:
    """Kafka records -> one row per record with the reading's fields, `error` naming why
    the value breaks the reading contract, or, where a registry is configured, why its
    schema tag refuses it (schema_tags; null for a valid reading; the fields of an
    invalid one are not to be used), the record's topic/partition/offset, and `raw` and
    `source_headers`, its value's bytes and its headers as they came (what a dead letter
    carries; no headers where the source was read without them)."""
    # Records without headers (read without includeHeaders) carry no tag to check.
    has_headers = "headers" in records.columns
    known = schema_tags.known_ids() if has_headers else None
    parsed = records.select(
        F.col("key").cast("string").alias("key"), F.col("value").alias("raw"),
        "topic", "partition", "offset", F.col("timestamp").alias("kafka_ts"), "value",
        (F.col("headers") if has_headers else F.lit(None).cast(KAFKA_HEADERS)).alias("source_headers"),
        F.expr("try_parse_json(cast(value as string))").alias("v"), *(["headers"] if known else []))
    # Each field's type and typed value once per record, a projection of its own that the
    # contract's checks read as columns (Spark keeps it apart: they use each more than
    # once). Written inside the checks' CASE WHEN, whose branches share no expression, the
    # same variant_get ran up to six times per field and record, each typed one building
    # a Cast and a SQLConf for every value: a quarter of the pipeline's Spark CPU (make
    # bench, JFR).
    probed = parsed.select("*", *_field_probes())
    error = _contract_error() if known is None else schema_tags.tag_errors(_contract_error(), known)
    return (probed.select("*", error.alias("error"))
            .drop("v", "value", "headers", *map(_kind_column, readings.FIELDS)))


def valid_only(parsed: DataFrame) -> DataFrame:
    """The valid readings of parse_readings, without what only a dead letter needs."""
    return parsed.where(F.col("error").isNull()).drop("error", "raw", "source_headers")


# A valid reading's dead letter, for a sink that finds it cannot store the reading (a
# conflicting duplicate, a row PostgreSQL refuses: jobs.base.postgres_batch_sink). Its
# reason header says `conflicting duplicate`; the sink puts the one it found.
SINK_LETTER = "sink_letter"


def valid_with_sink_letters(parsed: DataFrame, job: str) -> DataFrame:
    """valid_only, each reading with its SINK_LETTER (pure). Spark computes the letter
    only where a projection keeps the column, and the sink collects it with the rows."""
    valid = parsed.where(F.col("error").isNull())
    letter = dead_letter(valid, job, F.lit(dead_letters.CONFLICTING_DUPLICATE)).alias(SINK_LETTER)
    return valid.select("*", letter).drop("error", "raw", "source_headers")


def valid_readings(records: DataFrame) -> DataFrame:
    """The valid readings among Kafka records (a job sends the others to its dead letters:
    jobs.base.valid_readings)."""
    return valid_only(parse_readings(records))


def kafka_header(name: str, value: Column) -> Column:
    """One Kafka header (key, value bytes) of a Spark Kafka sink row."""
    return F.struct(F.lit(name).alias("key"), value.cast("string").cast("binary").alias("value"))


def _headers_size(headers: Column) -> Column:
    return F.aggregate(headers, F.lit(0).cast("long"), lambda n, h: n + F.octet_length(h["key"])
                       + F.coalesce(F.octet_length(h["value"]), F.lit(0)))


def dead_letter(parsed: DataFrame, job: str, reason: Column | None = None) -> Column:
    """A parsed record's dead letter as a struct (key, value, headers), as the client jobs'
    deadletters.bounded makes it: the record's key and bytes, its own headers
    (deadletters.carried; where `parsed` has them, as parse_readings' source_headers),
    then the letter's (its reason, the `error` column unless given, and its source); cut
    to a prefix with the TRUNCATION headers when it would not fit a produce request
    (deadletters.LETTER_BUDGET)."""
    values = (F.col("error") if reason is None else reason, F.col("topic"), F.col("partition"), F.col("offset"),
              F.lit(job))
    letter = F.array(*[kafka_header(name, value) for name, value in zip(dead_letters.HEADERS, values, strict=True)])
    carried = (F.filter(F.coalesce(F.col("source_headers"), F.array().cast(KAFKA_HEADERS)),
                        lambda h: ~h["key"].isin(*dead_letters.LETTER_HEADERS))
               if "source_headers" in parsed.columns else F.array().cast(KAFKA_HEADERS))
    key, raw = F.col("key"), F.col("raw")
    size = (F.coalesce(F.octet_length(key), F.lit(0)) + F.coalesce(F.octet_length(raw), F.lit(0))
            + _headers_size(carried) + _headers_size(letter))
    truncation = F.array(*[kafka_header(name, value) for name, value in zip(
        dead_letters.TRUNCATION, (F.lit("true"), F.coalesce(F.octet_length(raw), F.lit(0)),
                                 F.sha2(F.coalesce(raw, F.lit(b"")), 256)), strict=True)])
    kept = F.when(_headers_size(carried) <= dead_letters.PREFIX_BYTES, carried).otherwise(F.array().cast(KAFKA_HEADERS))
    whole = F.struct(key.alias("key"), raw.alias("value"), F.concat(carried, letter).alias("headers"))
    cut = F.struct(F.substring(key, 1, dead_letters.PREFIX_BYTES).alias("key"),
                   F.substring(raw, 1, dead_letters.PREFIX_BYTES).alias("value"),
                   F.concat(kept, letter, truncation).alias("headers"))
    return F.when(size > dead_letters.LETTER_BUDGET, cut).otherwise(whole)


def dead_letter_rows(parsed: DataFrame, topic: str, job: str) -> DataFrame:
    """Records of parse_readings that break the contract -> Kafka sink rows for the
    dead-letter `topic` (dead_letter) (pure)."""
    return parsed.where(F.col("error").isNotNull()).select(F.lit(topic).alias("topic"),
                                                           dead_letter(parsed, job).alias("letter")).select(
        "topic", F.col("letter.key").alias("key"), F.col("letter.value").alias("value"),
        F.col("letter.headers").alias("headers"))


def route_rows(parsed: DataFrame, routes: Sequence[tuple[str, Column, Column]], deadletter_topic: str,
               job: str) -> DataFrame:
    """Records of parse_readings -> Kafka sink rows (topic, key, value, headers) in one
    pass: a valid record once per route (topic, predicate, headers) whose predicate
    holds, a record that breaks the contract once to the dead-letter topic with its
    reason. One scan of the source and no union, so the query also runs in real-time
    mode, which refuses a union of a source with itself (pure)."""
    letter = dead_letter(parsed, job)
    target = F.struct(F.lit(deadletter_topic).alias("topic"), letter["key"].alias("key"),
                      letter["value"].alias("value"), letter["headers"].alias("headers"))
    routed = F.filter(F.array(*[F.when(predicate, F.struct(F.lit(topic).alias("topic"), F.col("key").alias("key"),
                                                           F.col("raw").alias("value"), headers.alias("headers")))
                                for topic, predicate, headers in routes]), lambda t: t.isNotNull())
    targets = F.when(F.col("error").isNotNull(), F.array(target)).otherwise(routed)
    return (parsed.select(F.explode(targets).alias("t"))
            .select(F.col("t.topic").alias("topic"), F.col("t.key").alias("key"), F.col("t.value").alias("value"),
                    F.col("t.headers").alias("headers")))

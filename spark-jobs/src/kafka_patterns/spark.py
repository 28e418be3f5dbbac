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
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_patterns import clients, deadletters, readings, streaming_metrics
from kafka_patterns.catalogue import ROOT, versions


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


def session(app_name: str) -> SparkSession:
    """The active session, or a new local one (spark-submit/the operator set the master).
    A new session exports its streaming progress as Prometheus metrics of job `app_name`
    when KP_METRICS_PORT is set (streaming_metrics)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    if "SPARK_HOME" not in os.environ:
        # Local mode in this process: small shuffles, no UI, the cached connector jars,
        # bound to loopback like the rest of the local cluster.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.master(os.environ.get("SPARK_MASTER", "local[2]"))
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.jars", ",".join(str(j) for j in connector_jars()))
                   .config("spark.sql.shuffle.partitions", "3")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.driver.extraJavaOptions", "-Djava.net.preferIPv4Stack=true"))
    spark = builder.getOrCreate()
    # Locally the driver shares the terminal of `make demo`/`make bad-input`, where
    # Spark's routine warnings (AQE off for streaming, state store snapshots, consumer
    # pool sizes) drown the table; errors still show. In a pod, WARN goes to its log.
    default = "WARN" if "SPARK_HOME" in os.environ else "ERROR"
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
    return {"kafka.bootstrap.servers": clients.bootstrap_servers(),
            **{f"kafka.{k}": v for k, v in java_client_settings(clients.security_settings()).items()}}


def read_stream(spark: SparkSession, topics: list[str], starting_offsets: str = "earliest",
                **options: str) -> DataFrame:
    """A streaming DataFrame over topics (startingOffsets applies to a new checkpoint only)."""
    return (spark.readStream.format("kafka").options(**kafka_options())
            .option("subscribe", ",".join(topics)).option("startingOffsets", starting_offsets)
            .options(**options).load())


def read_batch(spark: SparkSession, topics: list[str], starting: str | dict = "earliest",
               ending: str | dict = "latest", **options: str) -> DataFrame:
    """A bounded read of an offset range (dicts are {topic: {partition: offset}})."""
    def as_option(o):
        return o if isinstance(o, str) else json.dumps({t: {str(p): v for p, v in ps.items()} for t, ps in o.items()})

    return (spark.read.format("kafka").options(**kafka_options())
            .option("subscribe", ",".join(topics)).option("startingOffsets", as_option(starting))
            .option("endingOffsets", as_option(ending)).options(**options).load())


def event_time(ts_ms: Column) -> Column:
    return (ts_ms / 1000).cast("timestamp")


# JSON types as Spark's variant names them (schema_of_variant), per contract kind.
# Integers beyond 64 bits and integral decimals (7.0) are DECIMAL(p,0) there: numbers.
_INTEGER_TYPES = "^(BIGINT|INT|SMALLINT|TINYINT)$"
_NUMBER_TYPES = "^(BIGINT|INT|SMALLINT|TINYINT|DECIMAL\\([0-9]+,[0-9]+\\)|DOUBLE|FLOAT)$"
_SQL_TYPE = {"string": "string", "integer": "bigint", "number": "double"}


def _contract_error() -> Column:
    """The reading contract of kafka_patterns.readings, as one Spark expression over the
    columns `value` (the record's bytes) and `v` (the value parsed as a variant, which
    keeps each field's JSON type): the reason of the first failing check, the same
    checks in the same order with the same reasons as readings.validate; null for a
    valid reading."""
    value, v = F.col("value"), F.col("v")
    def field(name: str) -> Column:
        return F.expr(f"variant_get(v, '$.{name}')")

    def typed(name: str) -> Column:
        return F.expr(f"try_variant_get(v, '$.{name}', '{_SQL_TYPE[readings.KINDS[name]]}')")

    kind = {f: F.expr(f"schema_of_variant(variant_get(v, '$.{f}'))") for f in readings.FIELDS}
    missing = F.concat_ws(",", *[F.when(field(f).isNull() | (kind[f] == "VOID"), F.lit(f)) for f in readings.FIELDS])
    error = (F.when(value.isNull(), F.lit("empty value"))
             .when(F.octet_length(value) > readings.MAX_VALUE_BYTES,
                   F.lit(f"larger than {readings.MAX_VALUE_BYTES} bytes"))
             .when(~F.expr("is_valid_utf8(cast(value as string))"), F.lit("not UTF-8"))
             .when(v.isNull(), F.lit("not JSON"))
             .when(~F.expr("schema_of_variant(v)").startswith("OBJECT"), F.lit("not a JSON object"))
             .when(missing != "", F.concat(F.lit("missing "), missing)))
    for name in readings.FIELDS:
        want = readings.KINDS[name]
        if want == "string":
            is_kind = kind[name] == "STRING"
        else:
            is_kind = kind[name].rlike(_INTEGER_TYPES if want == "integer" else _NUMBER_TYPES)
        error = error.when(~is_kind, F.lit(f"{name} is not a{'n' if want == 'integer' else ''} {want}"))
        if want == "string":
            error = (error.when(~F.length(typed(name)).between(1, readings.MAX_STRING),
                                F.lit(f"{name} is empty or longer than {readings.MAX_STRING} characters"))
                     .when(typed(name).rlike("[\\x00-\\x1F\\x7F]"), F.lit(f"{name} has a control character")))
        elif name in readings.RANGES:
            lo, hi = readings.RANGES[name]
            in_range = F.coalesce(typed(name).between(lo, hi), F.lit(False))  # null: no 64-bit value
            error = error.when(~in_range, F.lit(f"{name} out of range"))
    return error


def parse_readings(records: DataFrame) -> DataFrame:
    """Kafka records -> one row per record with the reading's fields, `error` naming why
    the value breaks the reading contract (null for a valid reading; the fields of an
    invalid one are not to be used), the record's topic/partition/offset, and `raw`, its
    value's bytes as they came (what a dead letter carries)."""
    parsed = records.select(
        F.col("key").cast("string").alias("key"), F.col("value").alias("raw"),
        "topic", "partition", "offset", F.col("timestamp").alias("kafka_ts"), "value",
        F.expr("try_parse_json(cast(value as string))").alias("v"))
    fields = [F.expr(f"try_variant_get(v, '$.{f}', '{_SQL_TYPE[k]}')").alias(f) for f, k in readings.KINDS.items()]
    return (parsed.select("*", *fields, _contract_error().alias("error"))
            .drop("v", "value"))


def valid_only(parsed: DataFrame) -> DataFrame:
    """The valid readings of parse_readings, without the error and raw columns."""
    return parsed.where(F.col("error").isNull()).drop("error", "raw")


def valid_readings(records: DataFrame) -> DataFrame:
    """The valid readings among Kafka records (a job sends the others to its dead letters:
    jobs.base.valid_readings)."""
    return valid_only(parse_readings(records))


def kafka_header(name: str, value: Column) -> Column:
    """One Kafka header (key, value bytes) of a Spark Kafka sink row."""
    return F.struct(F.lit(name).alias("key"), value.cast("string").cast("binary").alias("value"))


def dead_letter_rows(parsed: DataFrame, topic: str, job: str) -> DataFrame:
    """Records of parse_readings that break the contract -> Kafka sink rows for the
    dead-letter `topic`, with deadletters.HEADERS (pure)."""
    values = (F.col("error"), F.col("topic"), F.col("partition"), F.col("offset"), F.lit(job))
    return parsed.where(F.col("error").isNotNull()).select(
        F.lit(topic).alias("topic"), F.col("key"), F.col("raw").alias("value"),
        F.array(*[kafka_header(name, value)
                  for name, value in zip(deadletters.HEADERS, values, strict=True)]).alias("headers"))

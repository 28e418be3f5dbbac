"""Dead letters, one shape for every job: the record's original key and value, and in
headers why it was refused and where it came from (HEADERS). Jobs route a bad record
here and carry on; `reason` is the reading contract's (kafka_patterns.readings)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

# Header names, in the order they are written.
HEADERS = ("reason", "source.topic", "source.partition", "source.offset", "job")


def header(name: str, value: Column) -> Column:
    """One Kafka header (key, value bytes) of a Spark Kafka sink row."""
    return F.struct(F.lit(name).alias("key"), value.cast("string").cast("binary").alias("value"))


def spark_rows(parsed: DataFrame, topic: str, job: str) -> DataFrame:
    """Records of spark.parse_readings that break the contract -> Kafka sink rows for the
    dead-letter `topic`, with HEADERS (pure)."""
    values = (F.col("error"), F.col("topic"), F.col("partition"), F.col("offset"), F.lit(job))
    return parsed.where(F.col("error").isNotNull()).select(
        F.lit(topic).alias("topic"), F.col("key"), F.col("raw").alias("value"),
        F.array(*[header(name, value) for name, value in zip(HEADERS, values, strict=True)]).alias("headers"))

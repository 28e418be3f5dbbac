"""content-based filtering: subscribers select readings by predicates on the payload.

    python -m kafka_patterns.jobs.content_filter --job content-filter [--available-now]

Each reading of weather.readings is tested against the alert predicates and routed to
the topic of every predicate it matches: temperature >= 30 °C -> weather.alerts.heat,
temperature <= 0 °C -> weather.alerts.frost; other readings go nowhere. Malformed
records go to weather.deadletter with the reason in the `reason` header (and their
source topic/partition/offset and the job in headers), so nothing crashes the job or vanishes.

Guarantee: no matching reading lost, none routed to the wrong topic; duplicates
counted. The Kafka sink is at-least-once (Spark cannot make a Kafka write part of
its checkpoint commit): a micro-batch replayed after a crash is written again, so
readers deduplicate by (sensor, seq). Order per sensor within each alert topic
follows from the key (sensor) -> partition mapping.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_patterns.jobs import base
from kafka_patterns.runtime import spark

# °C; the Kafka Streams peer reads them from here (bench.streams_peer.rules).
HEAT_C = 30.0
FROST_C = 0.0
HEAT_TOPIC, FROST_TOPIC = "weather.alerts.heat", "weather.alerts.frost"

# Topic -> predicate on a parsed, valid reading (plain Python mirror: PREDICATES_PY).
PREDICATES: dict[str, Callable[[], Column]] = {
    HEAT_TOPIC: lambda: F.col("temperature") >= HEAT_C,
    FROST_TOPIC: lambda: F.col("temperature") <= FROST_C,
}
PREDICATES_PY: dict[str, Callable[[float], bool]] = {
    HEAT_TOPIC: lambda t: t >= HEAT_C,
    FROST_TOPIC: lambda t: t <= FROST_C,
}


def route(parsed: DataFrame, deadletter_topic: str, job: str) -> DataFrame:
    """Parsed records -> Kafka sink rows (topic, key, value, headers): one row per
    matching predicate, and dead letters of the job for malformed records (pure)."""
    return spark.route_rows(parsed, [(topic, pred(), F.array(spark.kafka_header("predicate", F.lit(topic))))
                                     for topic, pred in PREDICATES.items()], deadletter_topic, job)


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    args = base.parser(job, __doc__).parse_args(argv)
    missing = set(PREDICATES) - set(job.output_topics)
    if missing:
        raise SystemExit(f"catalogue jobs.{job.name}.outputs lacks {sorted(missing)}")
    session = spark.session(job.name)
    records = spark.read_stream(session, list(job.inputs), args.starting_offsets, **base.source_options(args))
    routed = route(spark.parse_readings(records), job.deadletter_topic, job.name)
    writer = routed.writeStream.format("kafka").options(**spark.kafka_sink_options())
    base.await_all([base.start(writer, job, args, stateless_kafka_sink=True)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

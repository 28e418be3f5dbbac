"""confluent-kafka clients with the platform's guarantee defaults.

Bootstrap servers come from KAFKA_BOOTSTRAP_SERVERS (set on Kubernetes) or else
from the Ansible inventory of the local cluster. Security settings come from
KAFKA_CLIENT_* environment variables where they are set (the chart sets them, e.g.
KAFKA_CLIENT_SASL_MECHANISM=SCRAM-SHA-512 -> sasl.mechanism); otherwise a client
connects over SASL_SSL as its catalogue user (kafka_patterns.config.credentials).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Message, Producer
from confluent_kafka.admin import AdminClient

from kafka_patterns.config import credentials, settings


def bootstrap_servers() -> str:
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        return os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    from kafka_patterns.config import inventory

    return inventory.load().bootstrap_servers


def security_settings(user: str | None = None) -> dict[str, str]:
    """TLS and SASL settings: KAFKA_CLIENT_* when given (Kubernetes, your own Kafka),
    else the catalogue user's credential on the local or hosts cluster."""
    overrides = settings.kafka_client_overrides()
    if overrides or os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        return overrides
    return credentials.librdkafka_settings(user)


# librdkafka's own log lines (a transient "Coordinator load in progress" while a fresh
# cluster loads, a background queue purged at close) go through Python logging: in a
# pod or a job's log they show as before (logging's last resort prints warnings to
# stderr), and a command with a table to print sends them to a log file instead.
LIBRDKAFKA_LOG = logging.getLogger("librdkafka")


def base_config(user: str | None = None) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap_servers(), **security_settings(user), "logger": LIBRDKAFKA_LOG}


def log_client_messages_to(path: Path) -> None:
    """librdkafka's log lines of this process go to `path` only (make demo, bad-input)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    LIBRDKAFKA_LOG.addHandler(handler)
    LIBRDKAFKA_LOG.setLevel(logging.INFO)
    LIBRDKAFKA_LOG.propagate = False


def producer(**overrides: Any) -> Producer:
    """acks=all with idempotence: no acknowledged record lost, no retry duplicated."""
    return Producer({**base_config(), "acks": "all", "enable.idempotence": True, "linger.ms": 5, **overrides})


# A record the broker took compressed may be far larger once a consumer holds it (the
# broker checks its limit against the compressed batch). A producer that sends consumed
# records on as they are (a copier) compresses too, and raises librdkafka's own check of
# the uncompressed record (message.max.bytes, 1 MB by default) so that the broker judges.
RESEND_AS_RECEIVED = {"compression.type": "zstd", "message.max.bytes": 64_000_000}


def consumer(group_id: str, **overrides: Any) -> Consumer:
    """Manual commits, from the earliest offset of a new group."""
    return Consumer({**base_config(), "group.id": group_id, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", **overrides})


def consume_ready(consumer: Consumer, max_records: int, timeout: float) -> list[Message]:
    """The records already fetched, up to max_records, or else the first to arrive within
    `timeout`. consume(max_records, timeout) waits out its whole timeout unless
    max_records arrive first (librdkafka), so below that rate every record waited up
    to the timeout in the client; here a batch is what piled up while the last was
    handled."""
    return consumer.consume(max_records, 0) or consumer.consume(1, timeout)


def admin(user: str | None = None) -> AdminClient:
    return AdminClient(base_config(user))


def probe() -> Consumer:
    """A consumer that only asks for metadata and watermarks (it never joins its group)."""
    return Consumer({**base_config(), "group.id": "platform-offset-probe", "enable.auto.commit": False})


# What a broker answers while a partition's leadership moves or a new topic's metadata
# spreads: the client's metadata catches up within moments, so the request is asked again.
LEADERSHIP_IN_FLUX = frozenset({"NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PART"})


def end_offsets(topic: str, partitions: int, timeout: float = 10.0) -> dict[int, int]:
    """High watermark of every partition of a topic, asked again while a partition's
    leadership is in flux (up to `timeout` in all)."""
    from confluent_kafka import KafkaException, TopicPartition

    offsets_probe = probe()
    deadline = time.monotonic() + timeout

    def high_watermark(partition: int) -> int:
        while True:
            try:
                return offsets_probe.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=max(deadline - time.monotonic(), 1.0))[1]
            except KafkaException as e:
                if e.args[0].name() not in LEADERSHIP_IN_FLUX or time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    try:
        return {p: high_watermark(p) for p in range(partitions)}
    finally:
        offsets_probe.close()


def cluster_id(topic: str, timeout: float = 10.0) -> str:
    """The id of the Kafka cluster that holds `topic` (from a metadata request on the
    topic, which a user allowed to read it may make)."""
    metadata_probe = probe()
    try:
        return metadata_probe.list_topics(topic, timeout=timeout).cluster_id
    finally:
        metadata_probe.close()


def wait_until(condition, timeout: float, interval: float = 0.5, what: str = "condition"):
    """Poll a condition until it returns a truthy value or the timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)

"""A lookup table for a stream-static join, read from its (compacted) topics once and
kept in Spark's cache.

Without the cache a micro-batch query reads the lookup topics again in full for every
micro-batch: seconds per batch on a small host, the largest part of the pipeline's
enrich latency. With it, the table is read again only when a lookup topic has grown
(its end offsets moved), checked every `refresh_seconds` by a watcher thread: a profile
written while the job runs joins within about that long, and until the new table is
cached the batches read the topics directly, as they would without the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from confluent_kafka import KafkaException, TopicPartition
from pyspark.sql import DataFrame, SparkSession

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.runtime import spark

REFRESH_SECONDS = 2.0


class CachedLookup:
    """`table` is the cached DataFrame to join with; close() stops the watcher."""

    def __init__(self, session: SparkSession, topics: Sequence[str], build: Callable[[DataFrame], DataFrame],
                 refresh_seconds: float = REFRESH_SECONDS):
        self.topics = list(topics)
        self.table = build(spark.read_batch(session, self.topics)).cache()
        self._probe = kafka.probe()
        self._ends = self._end_offsets()
        self.table.count()  # read it now, not in the first micro-batch
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, args=(refresh_seconds,), daemon=True,
                                         name=f"lookup {','.join(self.topics)}")
        self._watcher.start()

    def _end_offsets(self) -> dict[tuple[str, int], int] | None:
        """The lookup topics' end offsets, None when the brokers do not answer in time
        (the next check tries again)."""
        try:
            return {(t, p): self._probe.get_watermark_offsets(TopicPartition(t, p), timeout=5)[1]
                    for t in self.topics for p in range(catalogue.topics()[t].partitions)}
        except KafkaException:
            return None

    def _watch(self, refresh_seconds: float) -> None:
        while not self._stop.wait(refresh_seconds):
            ends = self._end_offsets()
            if ends is not None and ends != self._ends:
                # Drop the stale copy, then cache and read the same plan again: its
                # Kafka read takes the topics' end offsets as they are now.
                self.table.unpersist()
                self.table.cache().count()
                self._ends = ends

    def close(self) -> None:
        self._stop.set()
        self._watcher.join(timeout=10)
        self._probe.close()

"""Delivery canary: proves, continuously and on the live cluster, that what the broker
acknowledged is delivered once and in order, and exports the proof as Prometheus metrics.

It produces sequence-numbered probes (acks=all, idempotence) to its own topic, one
sequence per partition, reads them back in its own consumer group and accounts for
every sequence number: lost (acked at an offset its reader went past without reading
it, or still unread when the canary stops after the grace period), duplicated,
reordered (read after a later one) and failed (the producer was told: not lost). An
acked probe unread after the grace period, its offset not yet reached, is overdue: the
reader is stalled (a coordinator away, a long rebalance), which is not a loss.

    python -m kafka_patterns.monitoring.canary --topic canary --group canary --rate 10 \\
        --metrics-port 9464 --grace-seconds 30 [--producer-config KEY=VALUE ...] [--duration 60]

--producer-config overrides the producer's settings, e.g. `acks=1` with
`enable.idempotence=false` to show what an unsafe producer loses.

Metrics are served on http://127.0.0.1:<metrics-port>/metrics. It runs until SIGTERM
(or --duration seconds), then drains, counts what never arrived and prints a JSON summary.
It connects as the catalogue user `canary` unless KP_KAFKA_USER says otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kafka_patterns.clients import kafka
from kafka_patterns.config.credentials import CredentialsError
from kafka_patterns.runtime import metrics_server
from kafka_patterns.runtime.metrics_server import MetricsPortBusy

log = logging.getLogger("kafka_patterns.monitoring.canary")
PREFIX = "kafka_patterns_canary_"
OUTCOMES = ("produced", "acked", "failed", "consumed", "lost", "duplicated", "reordered")
# 1 ms (same host, idle) to 30 s (a leader election under load): the grace period's range.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class CanaryError(Exception):
    """Wrong configuration or a busy port; the message names the option to change."""


class Metrics:
    """The canary's counters and latency histogram, in a registry of its own."""

    def __init__(self, registry: CollectorRegistry, topic: str) -> None:
        self.registry, self.topic = registry, topic
        self._counters = {o: Counter(f"{PREFIX}records_{o}", f"Canary records {o}", ["topic"],
                                     registry=registry).labels(topic) for o in OUTCOMES}
        self._latency = Histogram(f"{PREFIX}end_to_end_latency_seconds", "Produce timestamp to consume wall time",
                                  ["topic"], buckets=LATENCY_BUCKETS, registry=registry).labels(topic)
        self.overdue = Gauge(f"{PREFIX}records_overdue", "Acked records unread after the grace period, "
                             "their offset not yet reached (a stalled reader)", ["topic"],
                             registry=registry).labels(topic)

    def count(self, outcome: str, n: int = 1) -> None:
        self._counters[outcome].inc(n)

    def observe_latency(self, seconds: float) -> None:
        self._latency.observe(max(seconds, 0.0))  # a wall clock step must not go negative

    def value(self, outcome: str) -> int:
        """A counter's total, or "overdue" (the gauge)."""
        name = f"{PREFIX}records_{outcome}" + ("" if outcome == "overdue" else "_total")
        return int(self.registry.get_sample_value(name, {"topic": self.topic}) or 0)


@dataclass
class PartitionLedger:
    """One partition's sequence numbers, in memory bounded by what is still open."""

    settled_below: int = 0  # every seq below is settled: consumed, failed or lost
    highest: int = -1  # the highest seq consumed
    consumed_above: set[int] = field(default_factory=set)  # consumed seqs >= settled_below
    written_off: dict[int, str] = field(default_factory=dict)  # seq -> "failed" | "lost", not (yet) consumed
    awaiting: dict[int, float] = field(default_factory=dict)  # acked, not consumed: seq -> ack time
    offsets: dict[int, int] = field(default_factory=dict)  # awaiting seq -> the offset its ack reported
    read_through: int = -1  # the highest offset read

    def was_consumed(self, seq: int) -> bool:
        return seq in self.consumed_above or (seq < self.settled_below and seq not in self.written_off)

    def settle(self) -> None:
        while self.settled_below in self.consumed_above or self.settled_below in self.written_off:
            self.consumed_above.discard(self.settled_below)
            self.settled_below += 1


class Ledger:
    """Pure delivery accounting (no Kafka): fed the delivery reports and the records read
    back, it counts lost, duplicated, reordered and failed records into the metrics."""

    def __init__(self, metrics: Metrics, grace_seconds: float = 30.0) -> None:
        self.metrics, self.grace = metrics, grace_seconds
        self.partitions: dict[int, PartitionLedger] = {}

    def _p(self, partition: int) -> PartitionLedger:
        return self.partitions.setdefault(partition, PartitionLedger())

    def acked(self, partition: int, seq: int, ts: float, offset: int | None = None) -> None:
        self.metrics.count("acked")
        p = self._p(partition)
        if not p.was_consumed(seq):  # the read can beat the delivery report
            p.awaiting[seq] = ts
            if offset is not None and offset >= 0:
                p.offsets[seq] = offset
                self._write_off_passed(p)

    def failed(self, partition: int, seq: int) -> None:
        """The produce failed and the producer knows: counted as failed, never as lost."""
        self.metrics.count("failed")
        p = self._p(partition)
        if not p.was_consumed(seq):
            p.written_off[seq] = "failed"
            p.settle()

    def consumed(self, partition: int, seq: int, ts: float, now: float) -> None:
        """A record read back; `ts` is its producer wall time in ms, `now` the read's in s."""
        self.metrics.count("consumed")
        p = self._p(partition)
        verdict = p.written_off.pop(seq, None)
        if verdict is None and p.was_consumed(seq):
            self.metrics.count("duplicated")
            return
        if verdict == "lost" or (verdict is None and seq < p.highest):
            self.metrics.count("reordered")  # a later seq came first (or it was written off as lost)
        p.highest = max(p.highest, seq)
        if seq >= p.settled_below:
            p.consumed_above.add(seq)
        p.awaiting.pop(seq, None)
        p.offsets.pop(seq, None)
        p.settle()
        self.metrics.observe_latency(now - ts / 1000)

    def read_through(self, partition: int, offset: int) -> None:
        """The reader got the record at `offset` (ours or not): an acked probe at or
        below it that was not read is gone (a truncated log, a skipped range): lost."""
        p = self._p(partition)
        p.read_through = max(p.read_through, offset)
        self._write_off_passed(p)

    def _write_off_passed(self, p: PartitionLedger) -> None:
        passed = [s for s, o in p.offsets.items() if o <= p.read_through]
        self._write_off(p, passed)

    def _write_off(self, p: PartitionLedger, seqs: list[int]) -> None:
        for seq in seqs:
            del p.awaiting[seq]
            p.offsets.pop(seq, None)
            p.written_off[seq] = "lost"
        self.metrics.count("lost", len(seqs))
        p.settle()

    def expire(self, now: float, final: bool = False) -> None:
        """Count the acked records still unread `grace` seconds after their ack as overdue;
        `final` (the canary stops and will read no more): lost."""
        overdue = 0
        for p in self.partitions.values():
            late = [s for s, acked in p.awaiting.items() if now - acked >= self.grace]
            if final:
                self._write_off(p, late)
            else:
                overdue += len(late)
        self.metrics.overdue.set(overdue)

    def pending(self) -> int:
        return sum(len(p.awaiting) for p in self.partitions.values())


class QuietLog:
    """One line per distinct error, then its count once a minute: an outage must not flood."""

    def __init__(self, every: float = 60.0) -> None:
        self.every, self.last = every, time.monotonic()
        self.first: dict[str, str] = {}  # error (digits masked) -> its first wording
        self.counts: dict[str, int] = {}
        self.reported: dict[str, int] = {}

    def error(self, text: str) -> None:
        key = re.sub(r"\d+", "N", text)  # broker ids, ports and durations vary within one error
        self.counts[key] = self.counts.get(key, 0) + 1
        if key not in self.first:
            self.first[key], self.reported[key] = text, 1
            log.warning("canary: %s", text)

    def report(self, force: bool = False) -> None:
        if not force and time.monotonic() - self.last < self.every:
            return
        self.last = time.monotonic()
        for key, n in self.counts.items():
            if n != self.reported[key]:
                log.warning("canary: %s (%d times so far)", self.first[key], n)
                self.reported[key] = n


@dataclass
class Options:
    topic: str = "canary"
    group: str = "canary"
    rate: float = 10.0
    metrics_port: int | None = 9464  # None: no server (a test reads the registry)
    metrics_addr: str = "127.0.0.1"
    grace_seconds: float = 30.0
    producer_config: dict[str, str] = field(default_factory=dict)
    duration: float | None = None


class Canary:
    """The running canary: `run(stop_event)` in any thread, `summary()` at any time."""

    def __init__(self, options: Options, registry: CollectorRegistry | None = None) -> None:
        self.options, self.instance = options, uuid.uuid4().hex[:12]
        self.registry = registry or CollectorRegistry()
        self.metrics = Metrics(self.registry, options.topic)
        self.ledger = Ledger(self.metrics, options.grace_seconds)
        self.errors = QuietLog()
        self.librdkafka_log = logging.getLogger(f"kafka_patterns.monitoring.canary.librdkafka.{self.instance}")
        self.librdkafka_log.addFilter(self._quiet_librdkafka)
        self.producer_failed_fatally, self.unreported = False, 0
        self.read_up_to: dict[int, int] = {}  # partition -> highest offset read

    def _quiet_librdkafka(self, record: logging.LogRecord) -> bool:
        """librdkafka repeats a connection error per broker and retry: through QuietLog instead."""
        if record.levelno >= logging.WARNING:
            self.errors.error(record.getMessage())
        return False

    def summary(self) -> dict:
        return {"topic": self.options.topic, "instance": self.instance, "pending": self.ledger.pending(),
                "unreported": self.unreported, "overdue": self.metrics.value("overdue"),
                **{o: self.metrics.value(o) for o in OUTCOMES}}

    def _kafka_error(self, err) -> None:
        self.errors.error(f"{err.name()}: {err.str()}")
        if err.fatal():  # an idempotent producer's fatal error: it is replaced, the canary goes on
            self.producer_failed_fatally = True

    def _new_producer(self):
        try:
            return kafka.producer(error_cb=self._kafka_error, logger=self.librdkafka_log,
                                    **self.options.producer_config)
        except (KafkaException, ValueError, TypeError) as e:
            raise CanaryError(f"--producer-config: {e}") from None

    def _partitions(self, producer) -> list[int]:
        topic = self.options.topic
        try:
            meta = producer.list_topics(topic, timeout=30).topics[topic]
        except KafkaException as e:
            raise CanaryError(f"--topic {topic}: no metadata from {kafka.bootstrap_servers()}: {e}") from None
        if meta.error is not None or not meta.partitions:
            raise CanaryError(f"--topic {topic}: {meta.error or 'no partitions'} (is it declared in "
                              "catalogue/catalogue.yaml, and may this Kafka user describe it?)")
        return sorted(meta.partitions)

    def _produce(self, producer, partition: int, seq: int) -> bool:
        def delivered(err, msg) -> None:
            if err is None:
                self.ledger.acked(partition, seq, time.time(), msg.offset())
            else:
                self.errors.error(f"produce failed: {err.str()}")
                self.ledger.failed(partition, seq)

        value = json.dumps({"canary": self.instance, "seq": seq, "ts": int(time.time() * 1000)})
        try:
            producer.produce(self.options.topic, value=value, key=f"canary-{partition}", partition=partition,
                             on_delivery=delivered)
        except BufferError:  # the local queue is full (brokers away): this seq is tried again later
            self.errors.error("producer queue full, probes delayed")
            return False
        self.metrics.count("produced")
        return True

    def _read(self, consumer, timeout: float) -> None:
        # A lone probe is read at once: its wait would count in the measured latency.
        for msg in kafka.consume_ready(consumer, 500, timeout):
            if msg.error() is not None:
                self.errors.error(f"consume: {msg.error().str()}")
                continue
            # A consumer rewind (a rebalance before the auto-commit) reads an offset again:
            # that is the reader's at-least-once, not a record written twice.
            if msg.offset() <= self.read_up_to.get(msg.partition(), -1):
                continue
            self.read_up_to[msg.partition()] = msg.offset()
            try:
                probe = json.loads(msg.value())
                mine, seq, ts = probe["canary"] == self.instance, int(probe["seq"]), float(probe["ts"])
            except (ValueError, TypeError, KeyError):
                self.errors.error(f"not a canary record at {msg.topic()}/{msg.partition()}")
                mine = False
            if mine:  # a former run's (or another canary's) probes are not ours to judge
                self.ledger.consumed(msg.partition(), seq, ts, time.time())
            self.ledger.read_through(msg.partition(), msg.offset())

    def run(self, stop_event: threading.Event) -> dict:
        """Probe until stop_event is set (or --duration passed), drain, return the summary."""
        o = self.options
        server = (metrics_server.serve(o.metrics_port, self.registry, o.metrics_addr)
                  if o.metrics_port is not None else None)
        try:
            producer = self._new_producer()
            partitions = self._partitions(producer)
            consumer = kafka.consumer(o.group, error_cb=self._kafka_error, logger=self.librdkafka_log,
                                        **{"enable.auto.commit": True})  # a restart reads on from its last run
            try:
                consumer.subscribe([o.topic])
                producer = self._probe(producer, consumer, partitions, stop_event)
                self._drain(producer, consumer)
            finally:
                consumer.close()
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()
        return self.summary()

    def _probe(self, producer, consumer, partitions: list[int], stop_event: threading.Event):
        """Produce at the rate round-robin over the partitions, read back, expire each second."""
        o, next_seq, interval = self.options, dict.fromkeys(partitions, 0), 1.0 / self.options.rate
        started = next_due = last_expire = time.monotonic()
        while not stop_event.is_set() and (o.duration is None or time.monotonic() - started < o.duration):
            while time.monotonic() >= next_due:
                p = partitions[sum(next_seq.values()) % len(partitions)]
                if not self._produce(producer, p, next_seq[p]):
                    next_due = time.monotonic() + 0.5
                    break
                next_seq[p] += 1
                next_due = max(next_due + interval, time.monotonic() - 1.0)  # no burst after a stall
            producer.poll(0)
            if self.producer_failed_fatally:
                producer.purge()
                producer.flush(5)  # its undelivered records report as failed
                producer, self.producer_failed_fatally = self._new_producer(), False
            self._read(consumer, max(0.0, min(0.1, next_due - time.monotonic())))
            if time.monotonic() - last_expire >= 1.0:
                self.ledger.expire(time.time())
                self.errors.report()
                last_expire = time.monotonic()
        return producer

    def _drain(self, producer, consumer) -> None:
        """Stop producing, wait for every delivery report, read until all acked records
        arrived or the grace period passed; then what is still missing is lost."""
        self.unreported = producer.flush(self.options.grace_seconds)  # no ack nor failure yet: not judged
        deadline = time.monotonic() + self.options.grace_seconds
        while self.ledger.pending() and time.monotonic() < deadline:
            self._read(consumer, 0.2)
        self.ledger.expire(time.time() + max(0.0, deadline - time.monotonic()), final=True)
        self.errors.report(force=True)


def parse_args(argv: list[str] | None = None) -> Options:
    d = Options()
    p = argparse.ArgumentParser(prog="python -m kafka_patterns.monitoring.canary", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topic", default=d.topic, help=f"the canary's own topic (default {d.topic})")
    p.add_argument("--group", default=d.group, help=f"its own consumer group (default {d.group})")
    p.add_argument("--rate", type=float, default=d.rate, help=f"probes per second, all partitions (default {d.rate:g})")
    p.add_argument("--metrics-port", type=int, default=d.metrics_port, help=f"default {d.metrics_port}")
    p.add_argument("--metrics-addr", default=d.metrics_addr, help=f"default {d.metrics_addr}")
    p.add_argument("--grace-seconds", type=float, default=d.grace_seconds,
                   help=f"an acked record unread this long is lost (default {d.grace_seconds:g})")
    p.add_argument("--producer-config", action="append", default=[], metavar="KEY=VALUE",
                   help="a librdkafka producer setting (repeatable)")
    p.add_argument("--duration", type=float, help="exit after this many seconds (default: until SIGTERM)")
    a = p.parse_args(argv)
    for option, number in {"--rate": a.rate, "--grace-seconds": a.grace_seconds, "--duration": a.duration}.items():
        if number is not None and not 0 < number < math.inf:
            p.error(f"{option} must be a positive number, not {number:g}")
    if not 0 <= a.metrics_port <= 65535:
        p.error(f"--metrics-port must be 0-65535 (0: any free port), not {a.metrics_port}")
    bad = [kv for kv in a.producer_config if "=" not in kv]
    if bad:
        p.error(f"--producer-config takes key=value, not {bad[0]!r}")
    return Options(a.topic, a.group, a.rate, a.metrics_port, a.metrics_addr, a.grace_seconds,
                   dict(kv.split("=", 1) for kv in a.producer_config), a.duration)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("KP_KAFKA_USER", "canary")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    options, stop = parse_args(argv), threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        print(json.dumps(Canary(options).run(stop), sort_keys=True))
    except (CanaryError, CredentialsError, MetricsPortBusy) as e:
        print(f"canary: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

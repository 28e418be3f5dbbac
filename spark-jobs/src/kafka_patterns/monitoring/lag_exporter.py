"""Consumer-group lag exporter: committed offsets, end offsets and their difference, as
Prometheus metrics under kafka_exporter's names.

On every scrape it lists the consumer groups, reads each group's committed offsets and
member count and the end (latest) offsets of the partitions they commit on, and exports

    kafka_consumergroup_current_offset{consumergroup,topic,partition}  committed offset
    kafka_consumergroup_lag{consumergroup,topic,partition}             end - committed, never negative
    kafka_consumergroup_lag_sum{consumergroup,topic}                   the lag summed over partitions
    kafka_topic_partition_current_offset{topic,partition}              end offset (of the groups' topics)
    kafka_consumergroup_members{consumergroup}                         members of the group
    kafka_patterns_lag_exporter_scrape_errors_total                    scrapes with a failed admin call
    kafka_patterns_lag_exporter_scrape_duration_seconds                the last scrape's duration
    process_start_time_seconds, process_cpu_seconds_total, ...        the exporter process (prometheus-client)

A partition without a committed offset has no current_offset and no lag; one of a deleted
topic (a group keeps its offsets) has no lag and fails no scrape. Why our own:
no kafka_exporter, KMinion or Burrow is reachable here; the names are kafka_exporter's,
so Strimzi's dashboards and our alert rules (catalogue/metrics/alerts.yml) work as is.

Share groups (KIP-932) are not exported (no kafka_sharegroup_lag): confluent-kafka 2.16
(librdkafka 2.16) has a ShareConsumer but no admin API for share groups. ConsumerGroupType
knows only CONSUMER and CLASSIC (no SHARE), and there is no describe_share_groups nor
list_share_group_offsets, so a share-partition's start offset cannot be read. Listing is
therefore restricted to consumer and classic groups; the fallback for share groups is the
brokers' `kafka-share-groups.sh --describe --offsets` (ShareGroupCommand). Streams groups
(KIP-1071) are left out by the same type filter; this project runs none.

    python -m kafka_patterns.monitoring.lag_exporter --metrics-port 9465 [--metrics-addr 127.0.0.1] \
        [--groups-regex REGEX]

--groups-regex matches group ids unanchored, like kafka_exporter's --group.filter (use
^...$ to anchor). It connects as the catalogue user `operator` (cluster, topic and group
Describe) unless KP_KAFKA_USER says otherwise, and runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from confluent_kafka import Consumer, ConsumerGroupType, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kafka_patterns.clients import kafka
from kafka_patterns.config.credentials import CredentialsError
from kafka_patterns.runtime import metrics_server
from kafka_patterns.runtime.metrics_server import MetricsPortBusy

log = logging.getLogger("kafka_patterns.monitoring.lag_exporter")
TIMEOUT = 10.0  # every admin call; a scrape with the brokers away ends after about one of them
PREFIX = "kafka_patterns_lag_exporter_"
TP = tuple[str, int]  # (topic, partition)


class Partial(Exception):
    """Some answers came back, some did not (e.g. one broker away): `found` is still good."""

    def __init__(self, found, errors: list[Exception]) -> None:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")
        self.found = found


class OffsetSource:
    """The Kafka side, behind four calls a test replaces with a fake. `user` is the Kafka
    user (None: KP_KAFKA_USER's or the default); `admin` and `new_reader` stand in for
    the clients in tests."""

    def __init__(self, user: str | None = None, timeout: float = TIMEOUT, admin: AdminClient | None = None,
                 new_reader: Callable[[str], Consumer] | None = None) -> None:
        self.timeout = timeout
        self.new_admin = (lambda: admin) if admin is not None else (lambda: kafka.admin(user))
        self.admin = self.new_admin()  # made now: missing credentials fail at start, naming the fix
        self.new_reader = new_reader or (lambda group: Consumer(
            {**kafka.base_config(user), "group.id": group, "enable.auto.commit": False}))
        self._partitions: list[TopicPartition] | None = None

    def _result(self, future):
        # request_timeout fails the future first; this bound only guards against a hang.
        return future.result(timeout=self.timeout + 5)

    def groups(self) -> list[str]:
        """Starts a scrape, with a new admin client (no connection or state of one from
        before a broker's restart: librdkafka's admin client has aborted on those, see
        committed()); the partitions are listed again at its first committed()."""
        self.admin, self._partitions = self.new_admin(), None
        # Share groups have no committed offsets to fetch (see the module docstring).
        types = {ConsumerGroupType.CONSUMER, ConsumerGroupType.CLASSIC}
        listing = self._result(self.admin.list_consumer_groups(types=types, request_timeout=self.timeout))
        found = sorted(g.group_id for g in listing.valid or [])
        if listing.errors:
            raise Partial(found, listing.errors)
        return found

    def committed(self, group: str) -> dict[TP, int | None]:
        """Committed offset per partition; None where nothing is committed (librdkafka: -1001).

        Read by a consumer of the group that never joins it, not by the admin client:
        librdkafka's admin client crashes the process (SIGSEGV in rd_kafka_cgrp_op from
        rd_kafka_handle_OffsetFetch; librdkafka issue 5040) when the OffsetFetch meets a
        coordinator that has moved, as they do when a broker dies, comes back, and when the
        brokers' preferred-leader election hands __consumer_offsets partitions back about 5
        minutes later (seen here as the exporter's SIGSEGV 5 minutes after each fault test's
        restart). A consumer looks its coordinator up again instead. It asks for every
        partition of the cluster, as kafka_exporter does. One short-lived consumer per group
        and scrape (its own TLS connections): cheap for the handful of groups a cluster of
        this project holds; a cache of consumers would pay off only with many more."""
        if self._partitions is None:
            topics = self.admin.list_topics(timeout=self.timeout).topics
            self._partitions = [TopicPartition(t, p) for t, meta in topics.items() for p in meta.partitions]
        reader = self.new_reader(group)
        try:
            answer = reader.committed(self._partitions, timeout=self.timeout)
        finally:
            reader.close()
        return {(tp.topic, tp.partition): tp.offset if tp.error is None and tp.offset >= 0 else None
                for tp in answer}

    def members(self, group: str) -> int:
        futures = self.admin.describe_consumer_groups([group], request_timeout=self.timeout)
        return len(self._result(futures[group]).members)

    def end_offsets(self, partitions: Iterable[TP]) -> dict[TP, int]:
        """High watermarks (read_uncommitted, as kafka_exporter): one request for all partitions.
        A partition of a deleted topic has none and is left out: a group keeps its committed
        offsets after the topic is gone, with nothing left to read, and that is no failure."""
        wanted = {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions}
        if not wanted:
            return {}
        found, errors = {}, []
        for tp, future in self.admin.list_offsets(wanted, request_timeout=self.timeout).items():
            try:
                found[(tp.topic, tp.partition)] = self._result(future).offset
            except Exception as e:  # that partition's leader is away: the others still count
                if not _topic_deleted(e):
                    errors.append(e)
        if errors:
            raise Partial(found, errors)
        return found


def _topic_deleted(e: Exception) -> bool:
    error = e.args[0] if isinstance(e, KafkaException) and e.args else None
    return isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


@dataclass
class Scrape:
    """What one scrape read; whatever failed is simply missing."""

    committed: dict[str, dict[TP, int]] = field(default_factory=dict)  # group -> partition -> offset
    members: dict[str, int] = field(default_factory=dict)
    ends: dict[TP, int] = field(default_factory=dict)
    failures: list[Exception] = field(default_factory=list)


def families(s: Scrape) -> list[GaugeMetricFamily]:
    """The kafka_exporter-named gauges of one scrape: the arithmetic, no Kafka."""
    gcp = ["consumergroup", "topic", "partition"]
    current = GaugeMetricFamily("kafka_consumergroup_current_offset", "Committed offset of a group", labels=gcp)
    lag = GaugeMetricFamily("kafka_consumergroup_lag", "End offset minus committed offset", labels=gcp)
    lag_sum = GaugeMetricFamily("kafka_consumergroup_lag_sum", "Lag summed over the topic's partitions",
                                labels=["consumergroup", "topic"])
    end = GaugeMetricFamily("kafka_topic_partition_current_offset", "End offset of a partition",
                            labels=["topic", "partition"])
    members = GaugeMetricFamily("kafka_consumergroup_members", "Members of a group", labels=["consumergroup"])
    for group, offsets in sorted(s.committed.items()):
        sums: dict[str, int] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            current.add_metric([group, topic, str(partition)], offset)
            if (topic, partition) not in s.ends:
                continue  # its end is unknown this scrape: no lag rather than a wrong one
            # Committed past the end: the log was truncated (unclean election) or the topic
            # recreated. Nothing is left to read, so 0, never a negative lag.
            behind = max(s.ends[(topic, partition)] - offset, 0)
            lag.add_metric([group, topic, str(partition)], behind)
            sums[topic] = sums.get(topic, 0) + behind
        for topic, total in sums.items():
            lag_sum.add_metric([group, topic], total)
    for (topic, partition), offset in sorted(s.ends.items()):
        end.add_metric([topic, str(partition)], offset)
    for group, n in sorted(s.members.items()):
        members.add_metric([group], n)
    return [current, lag, lag_sum, end, members]


class LagCollector(Collector):
    """Reads the offsets on every scrape; collect() never raises (a failed scrape is counted)."""

    def __init__(self, source: OffsetSource, groups_regex: str | None = None) -> None:
        self.source = source
        self.wanted = re.compile(groups_regex) if groups_regex else None
        self.errors = 0
        self._logged: str | None = None  # the failure last logged: an outage logs one line

    def collect(self) -> Iterator[Metric]:
        started, s = time.monotonic(), Scrape()
        try:
            self._read(s)
        except Exception as e:  # the brokers away: what was read so far is still exported
            s.failures.append(e)
        self._account(s.failures)
        yield from families(s)
        yield CounterMetricFamily(f"{PREFIX}scrape_errors", "Scrapes in which an admin call failed",
                                  value=self.errors)
        yield GaugeMetricFamily(f"{PREFIX}scrape_duration_seconds", "Duration of the last scrape",
                                value=time.monotonic() - started)

    def _read(self, s: Scrape) -> None:
        groups = [g for g in self._keep(s, self.source.groups) if not self.wanted or self.wanted.search(g)]
        for group in groups:
            try:
                s.committed[group] = {tp: o for tp, o in self.source.committed(group).items() if o is not None}
                s.members[group] = self.source.members(group)
            except Exception as e:  # e.g. the group deleted meanwhile: the other groups still count
                s.failures.append(e)
        s.ends = self._keep(s, self.source.end_offsets, sorted({tp for c in s.committed.values() for tp in c}))

    @staticmethod
    def _keep(s: Scrape, call, *args):
        try:
            return call(*args)
        except Partial as e:
            s.failures.append(e)
            return e.found

    def _account(self, failures: list[Exception]) -> None:
        if not failures:
            if self._logged is not None:
                log.info("lag exporter: scrapes succeed again")
            self._logged = None
            return
        self.errors += 1
        text = f"{type(failures[0]).__name__}: {failures[0]}"
        if re.sub(r"\d+", "N", text) != self._logged:  # ports, ids and durations vary within one outage
            self._logged = re.sub(r"\d+", "N", text)
            more = f" (+{len(failures) - 1} more failed calls)" if len(failures) > 1 else ""
            log.warning("lag exporter: scrape incomplete: %s%s", text, more)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kafka_patterns.monitoring.lag_exporter", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metrics-port", type=int, default=9465, help="default 9465")
    p.add_argument("--metrics-addr", default="127.0.0.1", help="default 127.0.0.1")
    p.add_argument("--groups-regex", help="export only groups whose id matches (unanchored)")
    a = p.parse_args(argv)
    if not 0 <= a.metrics_port <= 65535:
        p.error(f"--metrics-port must be 0-65535 (0: any free port), not {a.metrics_port}")
    try:
        re.compile(a.groups_regex or "")
    except re.error as e:
        p.error(f"--groups-regex {a.groups_regex!r}: {e}")
    return a


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("KP_KAFKA_USER", "operator")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    args, stop = parse_args(argv), threading.Event()
    registry = CollectorRegistry()
    # process_start_time_seconds and the rest, as every exporter has: a restart shows.
    ProcessCollector(registry=registry)
    try:
        registry.register(LagCollector(OffsetSource(), args.groups_regex))
        server = metrics_server.serve(args.metrics_port, registry, args.metrics_addr)
    except (MetricsPortBusy, CredentialsError) as e:
        print(f"lag_exporter: {e}", file=sys.stderr)
        return 2
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log.info("lag exporter: http://%s:%d/metrics", args.metrics_addr, server.server_port)
    stop.wait()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

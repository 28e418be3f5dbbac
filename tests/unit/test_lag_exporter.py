"""The lag exporter without a cluster: the collector's arithmetic over a fake OffsetSource,
the metric and label names as Prometheus exposes them, a failing scrape, the groups
filter, OffsetSource over a fake AdminClient, and a busy metrics port."""

from __future__ import annotations

import concurrent.futures
import logging
import socket
from types import SimpleNamespace

import pytest
from confluent_kafka import ConsumerGroupType, KafkaError, KafkaException, TopicPartition
from prometheus_client import CollectorRegistry

from kafka_patterns.clients import kafka
from kafka_patterns.monitoring import lag_exporter
from kafka_patterns.monitoring.lag_exporter import LagCollector, OffsetSource, Partial

ERRORS = "kafka_patterns_lag_exporter_scrape_errors_total"


class FakeSource:
    """committed: {group: {(topic, partition): offset or None}}; ends: {(topic, partition): offset}."""

    def __init__(self, committed: dict, ends: dict, members: dict | None = None, fail: Exception | None = None):
        self._committed, self._ends, self._members, self.fail = committed, ends, members or {}, fail

    def groups(self) -> list[str]:
        if self.fail is not None:
            raise self.fail
        return sorted(self._committed)

    def committed(self, group: str) -> dict:
        if isinstance(self._committed[group], Exception):
            raise self._committed[group]
        return dict(self._committed[group])

    def members(self, group: str) -> int:
        return self._members.get(group, 0)

    def end_offsets(self, partitions) -> dict:
        return {tp: self._ends[tp] for tp in partitions if tp in self._ends}


def registry(source, groups_regex: str | None = None) -> CollectorRegistry:
    r = CollectorRegistry()
    r.register(LagCollector(source, groups_regex))
    return r


def lag(r: CollectorRegistry, group: str, topic: str, partition: int) -> float | None:
    return r.get_sample_value("kafka_consumergroup_lag",
                              {"consumergroup": group, "topic": topic, "partition": str(partition)})


def lag_sum(r: CollectorRegistry, group: str, topic: str) -> float | None:
    return r.get_sample_value("kafka_consumergroup_lag_sum", {"consumergroup": group, "topic": topic})


APP = FakeSource(
    committed={"app": {("t", 0): 5, ("t", 1): 7, ("t", 2): 0, ("u", 0): 40},
               "audit": {("t", 0): 10}},
    ends={("t", 0): 10, ("t", 1): 7, ("t", 2): 3, ("u", 0): 42},
    members={"app": 3})


def test_lag_per_partition_and_summed_per_topic() -> None:
    r = registry(APP)
    assert [lag(r, "app", "t", p) for p in (0, 1, 2)] == [5, 0, 3]
    assert (lag_sum(r, "app", "t"), lag_sum(r, "app", "u"), lag_sum(r, "audit", "t")) == (8, 2, 0)


def test_metric_and_label_names_are_kafka_exporters() -> None:
    r = registry(APP)
    gtp = {"consumergroup": "app", "topic": "t", "partition": "0"}
    assert r.get_sample_value("kafka_consumergroup_current_offset", gtp) == 5
    assert r.get_sample_value("kafka_consumergroup_lag", gtp) == 5
    assert r.get_sample_value("kafka_consumergroup_lag_sum", {"consumergroup": "app", "topic": "t"}) == 8
    assert r.get_sample_value("kafka_topic_partition_current_offset", {"topic": "u", "partition": "0"}) == 42
    assert r.get_sample_value("kafka_consumergroup_members", {"consumergroup": "app"}) == 3
    assert r.get_sample_value("kafka_consumergroup_members", {"consumergroup": "audit"}) == 0
    assert r.get_sample_value(ERRORS) == 0
    assert r.get_sample_value("kafka_patterns_lag_exporter_scrape_duration_seconds") >= 0
    labels = {m.name: {tuple(sorted(s.labels)) for s in m.samples} for m in r.collect()}
    assert labels == {
        "kafka_consumergroup_current_offset": {("consumergroup", "partition", "topic")},
        "kafka_consumergroup_lag": {("consumergroup", "partition", "topic")},
        "kafka_consumergroup_lag_sum": {("consumergroup", "topic")},
        "kafka_topic_partition_current_offset": {("partition", "topic")},
        "kafka_consumergroup_members": {("consumergroup",)},
        "kafka_patterns_lag_exporter_scrape_errors": {()},
        "kafka_patterns_lag_exporter_scrape_duration_seconds": {()},
    }


def test_a_partition_without_a_committed_offset_is_skipped() -> None:
    r = registry(FakeSource({"app": {("t", 0): 4, ("t", 1): None}}, {("t", 0): 6, ("t", 1): 9}))
    assert lag(r, "app", "t", 1) is None
    assert r.get_sample_value("kafka_consumergroup_current_offset",
                              {"consumergroup": "app", "topic": "t", "partition": "1"}) is None
    assert lag_sum(r, "app", "t") == 2


def test_lag_is_never_negative_when_committed_is_past_the_end() -> None:
    r = registry(FakeSource({"app": {("t", 0): 12, ("t", 1): 1}}, {("t", 0): 10, ("t", 1): 4}))  # p0 truncated
    assert (lag(r, "app", "t", 0), lag(r, "app", "t", 1), lag_sum(r, "app", "t")) == (0, 3, 3)


def test_a_partition_whose_end_is_unknown_has_an_offset_but_no_lag() -> None:
    r = registry(FakeSource({"app": {("t", 0): 1, ("t", 1): 1}}, {("t", 0): 4}))
    assert (lag(r, "app", "t", 1), lag_sum(r, "app", "t")) == (None, 3)


def test_a_failing_source_counts_the_error_and_logs_once(caplog) -> None:
    source = FakeSource({}, {}, fail=KafkaException("Local: Broker transport failure on 127.0.0.1:9092"))
    collector = LagCollector(source)
    r = CollectorRegistry()
    r.register(collector)
    with caplog.at_level(logging.WARNING, logger="kafka_patterns.monitoring.lag_exporter"):
        first = {m.name: m for m in collector.collect()}  # no exception
        assert r.get_sample_value(ERRORS) == 2
    assert first["kafka_patterns_lag_exporter_scrape_errors"].samples[0].value == 1
    assert first["kafka_consumergroup_lag"].samples == []
    assert len(caplog.records) == 1 and "Broker transport failure" in caplog.text


class PartlyListed(FakeSource):
    """A listing that one broker did not answer, and a group deleted after it was listed."""

    def groups(self) -> list[str]:
        raise Partial(super().groups(), [KafkaException("broker 2 away")])


def test_a_failing_group_or_partial_listing_keeps_what_was_read() -> None:
    r = registry(PartlyListed({"gone": KafkaException("GROUP_ID_NOT_FOUND"), "app": {("t", 0): 1}}, {("t", 0): 3}))
    assert lag(r, "app", "t", 0) == 2  # get_sample_value scrapes: this is the first scrape
    assert r.get_sample_value(ERRORS) == 2  # the second: one count per failing scrape, not per failed call


def test_groups_regex_filters_unanchored_like_kafka_exporter() -> None:
    r = registry(APP, groups_regex="^aud")
    assert lag_sum(r, "audit", "t") == 0
    assert lag_sum(r, "app", "t") is None
    assert r.get_sample_value("kafka_consumergroup_members", {"consumergroup": "app"}) is None
    assert lag_sum(registry(APP, groups_regex="pp"), "app", "t") == 8


def test_cli_defaults_and_a_bad_regex() -> None:
    a = lag_exporter.parse_args([])
    assert (a.metrics_port, a.metrics_addr, a.groups_regex) == (9465, "127.0.0.1", None)
    with pytest.raises(SystemExit):
        lag_exporter.parse_args(["--groups-regex", "("])


def done(value=None, error: Exception | None = None) -> concurrent.futures.Future:
    f = concurrent.futures.Future()
    f.set_exception(error) if error else f.set_result(value)
    return f


class FakeAdmin:
    """The four AdminClient calls OffsetSource makes, answered from memory; records the kwargs."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def list_consumer_groups(self, **kw):
        self.calls.append(("list_consumer_groups", kw))
        return done(SimpleNamespace(valid=[SimpleNamespace(group_id="b"), SimpleNamespace(group_id="a")], errors=[]))

    def list_topics(self, **kw):
        self.calls.append(("list_topics", kw))
        return SimpleNamespace(topics={"t": SimpleNamespace(partitions={0: None, 1: None})})

    def describe_consumer_groups(self, group_ids, **kw):
        self.calls.append(("describe_consumer_groups", kw))
        return {group_ids[0]: done(SimpleNamespace(members=[object(), object()]))}

    def list_offsets(self, wanted, **kw):
        self.calls.append(("list_offsets", kw))
        return {tp: done(SimpleNamespace(offset=9)) if tp.partition == 0 else done(error=KafkaException("no leader"))
                for tp in wanted}


class FakeReader:
    """The consumer OffsetSource reads a group's committed offsets with, then closes."""

    def __init__(self, group: str) -> None:
        self.group, self.asked, self.closed = group, None, False

    def committed(self, partitions, timeout):
        self.asked = (sorted((tp.topic, tp.partition) for tp in partitions), timeout)
        return [TopicPartition("t", 0, 7), TopicPartition("t", 1, -1001)]  # -1001: nothing committed

    def close(self) -> None:
        self.closed = True


def test_offset_source_over_the_admin_client() -> None:
    admin, readers = FakeAdmin(), []
    source = OffsetSource(timeout=3, admin=admin, new_reader=lambda g: readers.append(FakeReader(g)) or readers[-1])
    assert source.groups() == ["a", "b"]
    assert source.committed("a") == {("t", 0): 7, ("t", 1): None}
    # a consumer of the group, asked for every partition of the cluster, then closed
    assert [(r.group, r.asked, r.closed) for r in readers] == [("a", ([("t", 0), ("t", 1)], 3), True)]
    assert source.members("a") == 2
    assert source.end_offsets([]) == {}
    with pytest.raises(Partial) as partial:
        source.end_offsets([("t", 0), ("t", 1)])
    assert partial.value.found == {("t", 0): 9}
    assert all(kw.get("request_timeout", kw.get("timeout")) == 3 for _, kw in admin.calls)  # a timeout on each
    assert admin.calls[0][1]["types"] == {ConsumerGroupType.CONSUMER, ConsumerGroupType.CLASSIC}


def test_a_partition_of_a_deleted_topic_has_no_end_offset_and_is_no_failure() -> None:
    admin = FakeAdmin()
    gone = KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))
    admin.list_offsets = lambda wanted, **kw: {
        tp: done(error=gone) if tp.topic == "deleted" else done(SimpleNamespace(offset=9)) for tp in wanted}
    assert OffsetSource(admin=admin).end_offsets([("t", 0), ("deleted", 0)]) == {("t", 0): 9}


def test_a_busy_metrics_port_fails_naming_it(monkeypatch, capsys) -> None:
    monkeypatch.setattr(kafka, "admin", lambda user=None: FakeAdmin())  # no credentials needed
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert lag_exporter.main(["--metrics-port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "--metrics-port" in err

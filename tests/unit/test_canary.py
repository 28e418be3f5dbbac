"""The delivery canary without a cluster: the Ledger's accounting table-driven, its
metrics as Prometheus exposes them, a busy metrics port, the CLI's checks, and a whole
run against an in-memory broker that drops one acknowledged record."""

from __future__ import annotations

import json
import socket
import threading
from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry

from kafka_patterns.clients import kafka
from kafka_patterns.monitoring import canary
from kafka_patterns.monitoring.canary import Canary, CanaryError, Ledger, Metrics, Options
from kafka_patterns.runtime import metrics_server
from kafka_patterns.runtime.metrics_server import MetricsPortBusy

TOPIC = "canary"
NONE = dict.fromkeys(("failed", "lost", "duplicated", "reordered"), 0)


def ledger(grace: float = 30.0) -> tuple[Ledger, CollectorRegistry]:
    registry = CollectorRegistry()
    return Ledger(Metrics(registry, TOPIC), grace), registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(f"kafka_patterns_canary_{name}", {"topic": TOPIC, **labels})


def replay(events: list[tuple], grace: float = 30.0) -> tuple[Ledger, CollectorRegistry]:
    """Events: ("ack", partition, seq, t, offset), ("fail", partition, seq),
    ("read", partition, seq, t, offset), ("expire", t, final)."""
    book, registry = ledger(grace)
    feed(book, events)
    return book, registry


def feed(book: Ledger, events: list[tuple]) -> None:
    for kind, *args in events:
        if kind == "ack":
            book.acked(*args)
        elif kind == "fail":
            book.failed(*args)
        elif kind == "read":
            partition, seq, t, offset = args
            book.consumed(partition, seq, t * 1000 - 5, t)  # produced 5 ms before it was read
            book.read_through(partition, offset)
        else:
            book.expire(*args)


def acks(*seqs: int, partition: int = 0, t: float = 0.0, at: tuple[int, ...] = ()) -> list[tuple]:
    """Acked at offsets `at` (default: offset = seq)."""
    return [("ack", partition, s, t, o) for s, o in zip(seqs, at or seqs, strict=True)]


def reads(*seqs: int, partition: int = 0, t: float = 1.0, at: tuple[int, ...] = ()) -> list[tuple]:
    """Read at offsets `at` (default: offset = seq)."""
    return [("read", partition, s, t, o) for s, o in zip(seqs, at or seqs, strict=True)]


def fails(*seqs: int, partition: int = 0) -> list[tuple]:
    return [("fail", partition, s) for s in seqs]


def expire(t: float, final: bool = False) -> list[tuple]:
    return [("expire", t, final)]


def stop(t: float) -> list[tuple]:
    """The canary stops: what is still unread after the grace period is lost."""
    return expire(t, final=True)


CASES = {
    "in order": (acks(0, 1, 2) + reads(0, 1, 2) + stop(100), {"consumed": 3}),
    "read before its ack": (reads(0, 1) + acks(0, 1) + stop(100), {"consumed": 2}),
    "a duplicate": (acks(0, 1, 2) + reads(0, 1, 2) + reads(1, at=(3,)) + stop(100),
                    {"consumed": 4, "duplicated": 1}),
    "a duplicate long after": (acks(0, 1, 2) + reads(0, 1, 2) + reads(0, at=(3,)), {"consumed": 4, "duplicated": 1}),
    # A retry wrote seq 1 after seq 2 (a producer without idempotence).
    "reordered in the log": (acks(0, 2, 1, at=(0, 1, 2)) + reads(0, 2, 1, at=(0, 1, 2)) + stop(100),
                             {"consumed": 3, "reordered": 1}),
    # The log lost offset 1 (truncated, then written again by a later probe).
    "its offset read past": (acks(0, 1, 2) + reads(0) + reads(2, at=(1,)) + expire(1), {"consumed": 2, "lost": 1}),
    "its offset read past before its ack": (reads(0, 2, at=(0, 1)) + acks(0, 1, 2, at=(0, 1, 1)),
                                            {"consumed": 2, "lost": 1}),
    # A reader stalled past the grace period (a coordinator away): overdue, not lost.
    "a stalled reader": (acks(0, 1, 2) + reads(0) + expire(31) + reads(1, 2, t=40) + expire(41), {"consumed": 3}),
    "acked, unread when the canary stops": (acks(0, 1) + reads(0) + stop(30), {"consumed": 1, "lost": 1}),
    "unread when it stops, within the grace period": (acks(0, 1) + reads(0) + stop(29.9), {"consumed": 1}),
    "lost, then read late": (acks(0, 1, 2) + reads(0) + reads(2, at=(1,)) + reads(1, at=(2,), t=40),
                             {"consumed": 3, "lost": 1, "reordered": 1}),
    "a failed produce": (acks(0) + fails(1) + acks(2, at=(1,)) + reads(0, 2, at=(0, 1)) + stop(100),
                         {"consumed": 2, "failed": 1}),
    "failed, yet written": (fails(0) + reads(0) + reads(0, at=(1,)) + stop(100),
                            {"consumed": 2, "failed": 1, "duplicated": 1}),
    "partitions apart": (acks(0, 1) + acks(0, partition=1) + reads(0, 1) + reads(0, partition=1)
                         + stop(100), {"consumed": 3}),
}


@pytest.mark.parametrize(("events", "expected"), CASES.values(), ids=CASES.keys())
def test_the_ledger_counts_each_outcome(events: list[tuple], expected: dict[str, int]) -> None:
    book, registry = replay(events)
    acked = sum(1 for e in events if e[0] == "ack")
    assert {o: book.metrics.value(o) for o in ("acked", *NONE, "consumed")} == \
        {"acked": acked, **NONE, **expected}
    assert value(registry, "records_lost_total") == expected.get("lost", 0)


def test_a_stalled_reader_counts_overdue_records_then_none() -> None:
    book, registry = replay(acks(0, 1, 2) + reads(0) + expire(29.9))
    assert value(registry, "records_overdue") == 0
    feed(book, expire(31))
    assert value(registry, "records_overdue") == 2 and book.metrics.value("lost") == 0
    feed(book, reads(1, 2, t=40) + expire(41))
    assert value(registry, "records_overdue") == 0 and book.metrics.value("lost") == 0


def test_memory_stays_bounded_by_what_is_open() -> None:
    book, _ = replay(acks(*range(1000)) + reads(*range(1000)) + expire(100))
    p = book.partitions[0]
    assert (p.settled_below, p.consumed_above, p.awaiting, p.offsets) == (1000, set(), {}, {})
    assert book.pending() == 0


def test_latency_is_observed_into_the_histogram() -> None:
    book, registry = ledger()
    book.consumed(0, 0, ts=1000.0, now=1.25)  # produced at 1.000 s, read at 1.250 s
    assert value(registry, "end_to_end_latency_seconds_count") == 1
    assert value(registry, "end_to_end_latency_seconds_sum") == pytest.approx(0.25)
    assert value(registry, "end_to_end_latency_seconds_bucket", le="0.1") == 0
    assert value(registry, "end_to_end_latency_seconds_bucket", le="0.25") == 1
    assert value(registry, "end_to_end_latency_seconds_bucket", le="30.0") == 1


def test_the_registry_exposes_every_metric() -> None:
    _, registry = ledger()
    for outcome in ("produced", "acked", "failed", "consumed", "lost", "duplicated", "reordered"):
        assert value(registry, f"records_{outcome}_total") == 0, outcome
    assert value(registry, "end_to_end_latency_seconds_bucket", le="0.001") == 0
    assert value(registry, "end_to_end_latency_seconds_count") == 0


def test_a_busy_metrics_port_fails_naming_it() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(MetricsPortBusy, match=rf"metrics port 127\.0\.0\.1:{port} .*--metrics-port"):
            metrics_server.serve(port, CollectorRegistry())


@pytest.mark.parametrize(("argv", "option"), [
    (["--rate", "0"], "--rate"),
    (["--grace-seconds", "-1"], "--grace-seconds"),
    (["--metrics-port", "70000"], "--metrics-port"),
    (["--producer-config", "acks"], "--producer-config"),
])
def test_wrong_options_fail_naming_the_option(argv: list[str], option: str, capsys) -> None:
    with pytest.raises(SystemExit):
        canary.parse_args(argv)
    assert option in capsys.readouterr().err


def test_the_cli_options() -> None:
    o = canary.parse_args(["--topic", "t", "--rate", "5", "--producer-config", "acks=1",
                           "--producer-config", "enable.idempotence=false", "--duration", "3"])
    assert (o.topic, o.group, o.rate, o.grace_seconds, o.duration) == ("t", "canary", 5.0, 30.0, 3.0)
    assert o.producer_config == {"acks": "1", "enable.idempotence": "false"}
    assert (o.metrics_addr, o.metrics_port) == ("127.0.0.1", 9464)


def test_an_unsafe_producer_override_fails_naming_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka, "base_config", lambda user=None: {"bootstrap.servers": "127.0.0.1:9"})
    with pytest.raises(CanaryError, match="--producer-config"):
        Canary(Options(producer_config={"acks": "1"}))._new_producer()  # idempotence needs acks=all


# --- a whole run against an in-memory broker ---------------------------------------

class FakeBroker:
    """Keeps what is produced (but the record `drop`), reports deliveries on poll."""

    def __init__(self, partitions: int, drop: tuple[int, int]) -> None:
        self.partitions, self.drop = partitions, drop
        self.log: list[SimpleNamespace] = []
        self.reports: list = []
        self.read = 0

    def producer(self, **_config):
        broker = self

        class Producer:
            def list_topics(self, topic, timeout):
                meta = SimpleNamespace(error=None, partitions=dict.fromkeys(range(broker.partitions)))
                return SimpleNamespace(topics={topic: meta})

            def produce(self, topic, value, key, partition, on_delivery):
                # The dropped record's offset goes to the next one: a truncated log written again.
                offset = sum(1 for m in broker.log if m.partition() == partition)
                if (partition, json.loads(value)["seq"]) != broker.drop:
                    broker.log.append(SimpleNamespace(value=lambda v=value: v, partition=lambda p=partition: p,
                                                      offset=lambda o=offset: o, topic=lambda: topic,
                                                      error=lambda: None))
                # Acked either way: the broker lost it after.
                broker.reports.append((on_delivery, SimpleNamespace(offset=lambda o=offset: o)))

            def poll(self, _timeout):
                while broker.reports:
                    on_delivery, msg = broker.reports.pop(0)
                    on_delivery(None, msg)

            def flush(self, _timeout):
                self.poll(0)
                return 0

        return Producer()

    def consumer(self, _group, **_config):
        broker = self

        class Consumer:
            def subscribe(self, _topics): ...

            def consume(self, _n, _timeout):
                batch, broker.read = broker.log[broker.read:], len(broker.log)
                return batch + batch[:1]  # and the batch's first record again: a rewind, not a duplicate

            def close(self): ...

        return Consumer()


def test_a_run_counts_a_dropped_acknowledged_record_as_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = FakeBroker(partitions=3, drop=(1, 2))
    monkeypatch.setattr(kafka, "producer", broker.producer)
    monkeypatch.setattr(kafka, "consumer", broker.consumer)
    probe = Canary(Options(rate=100, metrics_port=None, grace_seconds=0.3))
    stop, result = threading.Event(), {}
    worker = threading.Thread(target=lambda: result.update(probe.run(stop)))
    worker.start()
    kafka.wait_until(lambda: probe.summary()["consumed"] >= 30, timeout=10, interval=0.05, what="30 probes read")
    stop.set()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert result["produced"] == result["acked"] == result["consumed"] + 1 > 30
    assert (result["lost"], result["duplicated"], result["reordered"], result["failed"]) == (1, 0, 0, 0)
    assert result["pending"] == 0


def test_the_metrics_are_served_over_http() -> None:
    import urllib.request

    registry = CollectorRegistry()
    Metrics(registry, TOPIC).count("acked", 3)
    server = metrics_server.serve(0, registry)  # port 0: any free port
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        body = urllib.request.urlopen(url, timeout=5).read().decode()
    finally:
        server.shutdown()
        server.server_close()
    assert 'kafka_patterns_canary_records_acked_total{topic="canary"} 3.0' in body
    assert "kafka_patterns_canary_end_to_end_latency_seconds_bucket" in body


def test_a_repeated_error_logs_one_line_then_its_count(caplog: pytest.LogCaptureFixture) -> None:
    quiet = canary.QuietLog()
    with caplog.at_level("WARNING", logger="kafka_patterns.monitoring.canary"):
        for port in range(11092, 11092 + 50):
            quiet.error(f"127.0.0.1:{port}/1: Connect failed after 3ms")
        quiet.report(force=True)
        quiet.report(force=True)  # nothing new: nothing said
    assert [r.getMessage() for r in caplog.records] == [
        "canary: 127.0.0.1:11092/1: Connect failed after 3ms",
        "canary: 127.0.0.1:11092/1: Connect failed after 3ms (50 times so far)"]

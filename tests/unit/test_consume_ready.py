"""clients.consume_ready: a batch of what has already arrived, else the first record
only (librdkafka's consume(n, timeout) waits out the timeout unless n records come)."""

from __future__ import annotations

from kafka_patterns.clients import kafka


class RecordingConsumer:
    """Answers consume() from `ready` (records already fetched) and `arriving` (the next
    record to come within a timeout), recording each call."""

    def __init__(self, ready: list[str], arriving: list[str]):
        self.ready, self.arriving, self.calls = ready, arriving, []

    def consume(self, n: int, timeout: float) -> list[str]:
        self.calls.append((n, timeout))
        source = self.ready if timeout == 0 else self.arriving
        out, source[:] = source[:n], source[n:]
        return out


def test_records_already_fetched_come_back_without_waiting():
    c = RecordingConsumer(ready=["a", "b", "c"], arriving=["d"])
    assert kafka.consume_ready(c, 2, 0.5) == ["a", "b"]
    assert c.calls == [(2, 0)]


def test_with_nothing_fetched_it_waits_for_one_record_not_a_full_batch():
    c = RecordingConsumer(ready=[], arriving=["d", "e"])
    assert kafka.consume_ready(c, 500, 0.5) == ["d"]
    assert c.calls == [(500, 0), (1, 0.5)]

"""The cached lookup table of a stream-static join (kafka_patterns.runtime.lookups): read once
at start, served from the cache while the lookup topic is unchanged, read again once
its end offsets move. Spark's side is a stand-in that counts the reads, the end
offsets a stub: the test needs neither Kafka nor Spark."""

import threading

import pytest

from kafka_patterns.clients import kafka
from kafka_patterns.runtime import lookups


class Watermarks:
    """The offsets probe's stand-in: every partition ends at `end`; `checked` is set
    each time the watcher has looked at all of them."""

    def __init__(self, partitions: int):
        self.end, self.partitions, self.asked = 1, partitions, 0
        self.checked = threading.Event()

    def get_watermark_offsets(self, tp, timeout):
        self.asked += 1
        if self.asked % self.partitions == 0:
            self.checked.set()
        return 0, self.end

    def close(self):
        pass

    def next_check(self) -> None:
        """Until a whole check has run after this call (one may be under way)."""
        for _ in range(2):
            self.checked.clear()
            assert self.checked.wait(10), "the watcher did not check the end offsets"


class Table:
    """A DataFrame's stand-in: cache() and unpersist() track the cache, count() reads."""

    def __init__(self):
        self.reads, self.cached = 0, False

    def cache(self):
        self.cached = True
        return self

    def unpersist(self):
        self.cached = False
        return self

    def count(self):
        assert self.cached, "read while not cached: the next batches would not use it"
        self.reads += 1
        return 0


@pytest.fixture
def lookup(monkeypatch):
    partitions = lookups.catalogue.topics()["user.profiles"].partitions
    watermarks, table = Watermarks(partitions), Table()
    monkeypatch.setattr(kafka, "probe", lambda: watermarks)
    monkeypatch.setattr(lookups.spark, "read_batch", lambda session, topics: "records")
    cached = lookups.CachedLookup(None, ["user.profiles"], lambda records: table, refresh_seconds=0.01)
    yield cached, watermarks, table
    cached.close()


def test_the_table_is_read_at_start_and_again_only_when_the_topic_grows(lookup):
    cached, watermarks, table = lookup
    assert cached.table is table and table.reads == 1
    watermarks.next_check()
    assert table.reads == 1, "read again although the end offsets did not move"
    watermarks.end = 2
    watermarks.next_check()
    assert table.reads == 2 and table.cached
    watermarks.next_check()
    assert table.reads == 2


def test_close_stops_the_watcher(lookup):
    cached, _, _ = lookup
    cached.close()
    assert not cached._watcher.is_alive()

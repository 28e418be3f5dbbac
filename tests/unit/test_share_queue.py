"""Pure part of the share consumer: what is written and how each record is acknowledged."""

import json
from datetime import UTC, datetime

from confluent_kafka import AcknowledgeType

from helpers import FakeMessage as Msg
from helpers import reading
from kafka_patterns.jobs import share_queue as sq

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_readings_are_accepted_and_malformed_records_rejected():
    good = Msg(json.dumps(reading(3, sensor="sensor-04", run="r9")).encode(), 1, 10, delivery_count=2)
    bad = Msg(b"not a reading", 0, 5)
    rows, acks, letters = sq.decide([good, bad], "g", "c1", NOW)
    assert rows == [("g", "c1", 1, 10, "r9", "sensor-04", 3, 2, NOW)]
    assert acks == [(good, AcknowledgeType.ACCEPT), (bad, AcknowledgeType.REJECT)]
    assert letters == [(bad, "not JSON")]


def test_every_record_gets_exactly_one_acknowledgement():
    msgs = [Msg(json.dumps(reading(i)).encode(), i % 2, i) for i in range(6)] + [Msg(b"{", 0, 99)]
    rows, acks, _ = sq.decide(msgs, "g", "c1", NOW)
    assert [m for m, _ in acks] == msgs
    assert len(rows) == 6


def test_rows_match_the_sink_columns():
    rows, _, _ = sq.decide([Msg(json.dumps(reading(1)).encode(), 0, 0)], "g", "c", NOW)
    assert len(rows[0]) == len(sq.COLUMNS)

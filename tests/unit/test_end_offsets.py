"""clients.end_offsets asks again while a partition's leadership is in flux (a new
topic's metadata still spreading, a leader just moved) and gives up on anything else."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_patterns.clients import kafka


class FlakyProbe:
    """get_watermark_offsets raises the given errors first, then answers (0, 10 + partition)."""

    def __init__(self, errors: list[int]):
        self.errors, self.closed = list(errors), False

    def get_watermark_offsets(self, tp, timeout):
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return 0, 10 + tp.partition

    def close(self):
        self.closed = True


def test_a_leader_that_moved_is_asked_again(monkeypatch):
    p = FlakyProbe([KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE])
    monkeypatch.setattr(kafka, "probe", lambda: p)
    assert kafka.end_offsets("t", 2) == {0: 10, 1: 11}
    assert p.closed


def test_other_errors_are_raised_at_once(monkeypatch):
    p = FlakyProbe([KafkaError.TOPIC_AUTHORIZATION_FAILED])
    monkeypatch.setattr(kafka, "probe", lambda: p)
    with pytest.raises(KafkaException) as raised:
        kafka.end_offsets("t", 1)
    assert raised.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert p.closed


def test_leadership_in_flux_past_the_timeout_is_raised(monkeypatch):
    p = FlakyProbe([KafkaError.NOT_LEADER_FOR_PARTITION] * 1000)
    monkeypatch.setattr(kafka, "probe", lambda: p)
    with pytest.raises(KafkaException):
        kafka.end_offsets("t", 1, timeout=0.5)

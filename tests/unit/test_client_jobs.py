"""Pure parts of the client jobs."""

from kafka_patterns.jobs import at_most_once, transactional_copier
from kafka_patterns.readings import Reading


class FakeMessage:
    def __init__(self, value: bytes):
        self._value = value

    def value(self) -> bytes:
        return self._value


def test_at_most_once_rows_skip_malformed_values():
    good = Reading("r1", "sensor-01", "station-1", 4, 20.0, 50.0, 1).to_json()
    assert at_most_once.rows([FakeMessage(good), FakeMessage(b"{oops")]) == [("r1", "sensor-01", 4)]


def test_copier_copies_values_verbatim():
    assert transactional_copier.copy_value(b'{"a":1}') == b'{"a":1}'

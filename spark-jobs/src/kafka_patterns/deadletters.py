"""Dead letters, one shape for every job: the record's original key, value and headers,
and in headers of its own why it was refused and where it came from (HEADERS). The
record's headers go along so that a replay (kafka_patterns.dlq) gives the record back as
it was: a schema tag (kafka_patterns.registry) still names the version it was written
in, and the record is held to it again. A job routes a bad record
to its catalogue dead-letter topic (jobs.<job>.deadletter) and carries on; `reason` is
the reading contract's (kafka_patterns.readings). The Spark jobs build the same rows
with spark.dead_letter_rows; the client jobs send them with DeadLetters."""

from __future__ import annotations

from collections.abc import Sequence

from confluent_kafka import KafkaError, Message, Producer

from kafka_patterns import clients

# Header names, in the order they are written.
HEADERS = ("reason", "source.topic", "source.partition", "source.offset", "job")


Header = tuple[str, bytes | None]


def carried(record_headers: Sequence[Header] | None) -> list[Header]:
    """The headers of a record a letter carries along, or those a letter carried: all
    but the letter's own (HEADERS), so a record refused again holds one set (pure)."""
    return [(k, v) for k, v in record_headers or () if k not in HEADERS]


def headers(message: Message, reason: str, job: str) -> list[Header]:
    """The headers of a consumed record's letter: the record's own, then the letter's (pure)."""
    values = (reason, message.topic(), message.partition(), message.offset(), job)
    return carried(message.headers()) + [(name, str(value).encode())
                                         for name, value in zip(HEADERS, values, strict=True)]


class DeadLetters:
    """A client job's dead-letter producer. send() queues a letter; flush() waits until
    every queued letter is acknowledged, so a job that flushes before it commits its
    input offsets (or acknowledges a share record) never loses a letter: at worst a
    letter is sent twice, after a crash between the two."""

    def __init__(self, job: str, topic: str, producer: Producer | None = None):
        self.job, self.topic = job, topic
        self.producer = producer if producer is not None else clients.producer()
        self.sent = 0
        self.failures: list[KafkaError] = []

    def send(self, message: Message, reason: str) -> None:
        def delivered(err, _msg) -> None:
            if err is not None:
                self.failures.append(err)
        self.producer.produce(self.topic, key=message.key(), value=message.value(),
                              headers=headers(message, reason, self.job), on_delivery=delivered)
        self.sent += 1

    def flush(self, timeout: float = 60.0) -> None:
        """Raise unless every letter sent so far is acknowledged (the job then stops
        before committing, and its restart reads the bad records again)."""
        left = self.producer.flush(timeout)
        if left or self.failures:
            raise RuntimeError(f"{self.job}: dead letters to {self.topic} not acknowledged "
                               f"({left} pending, errors: {self.failures[:3]})")

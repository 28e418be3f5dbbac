"""Dead letters, one shape for every job: the record's original key and value, and in
headers why it was refused and where it came from (HEADERS). A job routes a bad record
to its catalogue dead-letter topic (jobs.<job>.deadletter) and carries on; `reason` is
the reading contract's (kafka_patterns.readings). The Spark jobs build the same rows
with spark.dead_letter_rows; the client jobs send them with DeadLetters."""

from __future__ import annotations

from confluent_kafka import KafkaError, Message, Producer

from kafka_patterns import clients

# Header names, in the order they are written.
HEADERS = ("reason", "source.topic", "source.partition", "source.offset", "job")


def headers(message: Message, reason: str, job: str) -> list[tuple[str, bytes]]:
    """The dead-letter headers of a consumed record (pure)."""
    values = (reason, message.topic(), message.partition(), message.offset(), job)
    return [(name, str(value).encode()) for name, value in zip(HEADERS, values, strict=True)]


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

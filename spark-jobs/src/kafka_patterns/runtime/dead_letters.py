"""Dead letters, one shape for every job: the record's original key, value and headers,
and in headers of its own why it was refused and where it came from (HEADERS). The
record's headers go along so that a replay (platform_cli.dlq) gives the record back as
it was: a schema tag (kafka_patterns.clients.registry) still names the version it was written
in, and the record is held to it again. A job routes a bad record
to its catalogue dead-letter topic (jobs.<job>.deadletter) and carries on; `reason` is
the reading contract's (kafka_patterns.runtime.readings). The Spark jobs build the same rows
with spark.dead_letter_rows; the client jobs send them with DeadLetters; the Kafka Streams
peers of make bench (bench/streams) read the header names, the budget and the prefix from
here (bench.streams_peer.rules)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from confluent_kafka import KafkaError, Message, Producer

from kafka_patterns.clients import kafka

# Header names, in the order they are written.
HEADERS = ("reason", "source.topic", "source.partition", "source.offset", "job")

# A letter must fit one produce request: librdkafka sends at most message.max.bytes
# (1,000,000), Kafka's Java producer (Spark's) max.request.size (1,048,576). A record the
# broker took compressed can be far larger once a job holds it uncompressed, and its
# letter would be refused (RecordTooLargeException), stopping the job on every restart.
# Above LETTER_BUDGET (key, value and headers together; the rest is the batch's own
# overhead) a letter keeps the first PREFIX_BYTES of the key and the value, the record's
# headers only if they are small, and says what it was in TRUNCATION headers: the value's
# size and SHA-256. Its reason is the contract's (larger than 4096 bytes, most often).
LETTER_BUDGET = 1_000_000 - 16_384
PREFIX_BYTES = 4096
TRUNCATION = ("truncated", "original.size", "original.sha256")


Header = tuple[str, bytes | None]

# The reason of a reading whose identity (run, sensor, seq) a deduplicating sink already
# holds with other values: an identical copy is skipped silently, another version is
# data the user must see. Its letter carries the stored version in STORED_HEADER.
CONFLICTING_DUPLICATE = "conflicting duplicate"
STORED_HEADER = "stored"
# Every header a letter may add to the record's own: a letter carries the record's
# headers without these, so a record lettered again (after a replay) holds one set.
LETTER_HEADERS = (*HEADERS, *TRUNCATION, STORED_HEADER)


def carried(record_headers: Sequence[Header] | None) -> list[Header]:
    """The headers of a record a letter carries along, or those a letter carried: all
    but the letter's own (LETTER_HEADERS), so a record refused again holds one set (pure)."""
    return [(k, v) for k, v in record_headers or () if k not in LETTER_HEADERS]


def own_headers(message: Message, reason: str, job: str) -> list[Header]:
    """A consumed record's letter's own headers (HEADERS), without the record's (pure)."""
    values = (reason, message.topic(), message.partition(), message.offset(), job)
    return [(name, str(value).encode()) for name, value in zip(HEADERS, values, strict=True)]


def headers(message: Message, reason: str, job: str) -> list[Header]:
    """The headers of a consumed record's letter: the record's own, then the letter's (pure)."""
    return carried(message.headers()) + own_headers(message, reason, job)


def _size(headers: Sequence[Header]) -> int:
    return sum(len(k.encode()) + len(v or b"") for k, v in headers)


def bounded(key: bytes | None, value: bytes | None, record_headers: Sequence[Header],
            letter_headers: Sequence[Header]) -> tuple[bytes | None, bytes | None, list[Header]]:
    """A letter's key, value and headers (the record's own, then the letter's), cut to
    fit LETTER_BUDGET as the comment above says; unchanged when they fit (pure)."""
    if len(key or b"") + len(value or b"") + _size(record_headers) + _size(letter_headers) <= LETTER_BUDGET:
        return key, value, [*record_headers, *letter_headers]
    kept = list(record_headers) if _size(record_headers) <= PREFIX_BYTES else []
    truncation = [(TRUNCATION[0], b"true"), (TRUNCATION[1], str(len(value or b"")).encode()),
                  (TRUNCATION[2], hashlib.sha256(value or b"").hexdigest().encode())]
    cut = (None if key is None else key[:PREFIX_BYTES], None if value is None else value[:PREFIX_BYTES])
    return *cut, [*kept, *letter_headers, *truncation]


def with_reason(letter_headers: Sequence[Header], reason: str, *extra: Header) -> list[Header]:
    """A letter's headers with its `reason` replaced, then `extra` (pure)."""
    return [(k, reason.encode() if k == HEADERS[0] else v) for k, v in letter_headers] + list(extra)


def is_truncated(letter_headers: dict[str, str]) -> bool:
    return letter_headers.get(TRUNCATION[0]) == "true"


class DeadLetters:
    """A client job's dead-letter producer. send() queues a letter; flush() waits until
    every queued letter is acknowledged, so a job that flushes before it commits its
    input offsets (or acknowledges a share record) never loses a letter: at worst a
    letter is sent twice, after a crash between the two."""

    def __init__(self, job: str, topic: str, producer: Producer | None = None):
        self.job, self.topic = job, topic
        self.producer = producer if producer is not None else kafka.producer()
        self.sent = 0
        self.failures: list[KafkaError] = []

    def send(self, message: Message, reason: str) -> None:
        key, value, letter_headers = bounded(message.key(), message.value(), carried(message.headers()),
                                             own_headers(message, reason, self.job))
        self.send_letter(key, value, letter_headers)

    def send_letter(self, key: bytes | None, value: bytes | None, letter_headers: Sequence[Header]) -> None:
        """Queue a letter made elsewhere (a Spark job's spark.SINK_LETTER), as it is."""
        def delivered(err, _msg) -> None:
            if err is not None:
                self.failures.append(err)
        self.producer.produce(self.topic, key=key, value=value, headers=list(letter_headers), on_delivery=delivered)
        self.sent += 1

    def flush(self, timeout: float = 60.0) -> None:
        """Raise unless every letter sent so far is acknowledged (the job then stops
        before committing, and its restart reads the bad records again)."""
        left = self.producer.flush(timeout)
        if left or self.failures:
            raise RuntimeError(f"{self.job}: dead letters to {self.topic} not acknowledged "
                               f"({left} pending, errors: {self.failures[:3]})")

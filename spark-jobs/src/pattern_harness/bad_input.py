"""Bad input: every kind of record that breaks the reading contract, fed to a running
pattern, and the proof that the pattern dead-letters each one and goes on.

    with bad_input.injecting() as injected:     # every generator.produce() in here first
        outcome = scenario.run()                # writes each bad case once to its topic
    report = bad_input.judge(injected, outcome.jobs, dlq.read_all())

CASES is the one table of the reading contract's cases (valid ones included): the unit
tests feed it to both parsers (readings.parse and spark.parse_readings), and the
bad-input suite (tests/integration/test_bad_input.py) to every pattern that reads
readings. A job of a pattern is expected to letter each bad record of every topic it
streams from (catalogue `inputs`) once at least, with the contract's reason, the
record's own bytes and its source coordinates in headers (kafka_patterns.runtime.dead_letters).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.runtime import dead_letters

TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z, inside the contract's event-time range


def _good(run: str) -> dict:
    return {"run": run, "sensor": "sensor-01", "station": "station-1", "seq": 7, "temperature": 21.5,
            "humidity": 40.0, "ts": TS}


def cases(run: str = "r1") -> list[tuple[str, bytes | None, str | None]]:
    """(case, value, reason the contract gives, None for a valid reading); the readings
    carry `run`, so a job that wrongly took one would show it under that run."""
    good = _good(run)

    def with_(**changes) -> bytes:
        data = {**good, **changes}
        return json.dumps({k: v for k, v in data.items() if v is not None}).encode()

    def raw_with(name: str, json_text: str) -> bytes:
        return json.dumps({**good, name: "@@"}).replace('"@@"', json_text).encode()

    return [
        ("valid", with_(), None),
        ("valid at the ranges' edges", with_(temperature=-60, humidity=100, seq=0, ts=946_684_800_000), None),
        ("valid with an extra field", with_(note="kept"), None),
        ("valid with integral temperature", with_(temperature=21), None),
        ("valid 64-character sensor", with_(sensor="s" * 64), None),
        ("valid non-ASCII station", with_(station="Zürich-1 ☀"), None),
        # 64 characters outside the BMP: 64 code points, 128 UTF-16 units (Java), 256 bytes.
        ("valid 64 emoji sensor", with_(sensor="\U0001F321" * 64), None),
        ("empty value", None, "empty value"),
        ("too large", with_(note="x" * 5000), "larger than 4096 bytes"),
        ("invalid UTF-8", with_().replace(b"sensor-01", b"sensor-\xff\xfe"), "not UTF-8"),
        ("truncated JSON", b'{"run": "r1", "sensor"', "not JSON"),
        ("not JSON at all", b"{oops", "not JSON"),
        ("empty bytes", b"", "not JSON"),
        ("NaN temperature", raw_with("temperature", "NaN"), "not JSON"),
        ("duplicate key", with_()[:-1] + b', "seq": 8}', "not JSON"),
        ("a string", b'"just a string"', "not a JSON object"),
        ("an array", b"[1, 2]", "not a JSON object"),
        ("a number", b"42", "not a JSON object"),
        ("missing run", with_(run=None), "missing run"),
        ("missing seq and ts", with_(seq=None, ts=None), "missing seq,ts"),
        ("null humidity", raw_with("humidity", "null"), "missing humidity"),
        ("empty object", b"{}", "missing run,sensor,station,seq,temperature,humidity,ts"),
        ("temperature as a string", with_(temperature="21.5"), "temperature is not a number"),
        ("humidity as a boolean", with_(humidity=True), "humidity is not a number"),
        ("fractional seq", with_(seq=100005.7), "seq is not an integer"),
        ("integral float seq", raw_with("seq", "7.0"), "seq is not an integer"),
        ("ts in exponent notation", raw_with("ts", "1e20"), "ts is not an integer"),
        ("sensor as a number", with_(sensor=7), "sensor is not a string"),
        ("station as an object", with_(station={"id": 1}), "station is not a string"),
        ("empty sensor", with_(sensor=""), "sensor is empty or longer than 64 characters"),
        ("65-character run", with_(run="r" * 65), "run is empty or longer than 64 characters"),
        ("NUL in sensor", with_(sensor="sensor-\u000001"), "sensor has a control character"),
        ("newline in station", with_(station="station\n1"), "station has a control character"),
        ("negative seq", with_(seq=-1), "seq out of range"),
        ("seq beyond 64 bits", raw_with("seq", str(2**64)), "seq is not an integer"),
        ("temperature as a huge integer", raw_with("temperature", str(10**30)), "temperature out of range"),
        # At and beyond the longest number the contract reads (MAX_NUMBER_DIGITS, Jackson's).
        ("temperature as a 1,000-digit integer", raw_with("temperature", "9" * 1000), "temperature out of range"),
        ("temperature as a 1,001-digit integer", raw_with("temperature", "9" * 1001), "not JSON"),
        ("humidity with 1,001 digits and an exponent", raw_with("humidity", "1." + "0" * 999 + "e1"), "not JSON"),
        ("temperature too hot", with_(temperature=999), "temperature out of range"),
        ("humidity below 0", with_(humidity=-0.1), "humidity out of range"),
        ("ts in year 3000", with_(ts=32_503_680_000_000), "ts out of range"),
        ("negative ts", with_(ts=-1), "ts out of range"),
        ("ts in year 0", with_(ts=-62_167_219_200_000), "ts out of range"),
        ("ts in year 100000", with_(ts=3_093_527_980_800_000), "ts out of range"),
        ("ts of 1970", with_(ts=1000), "ts out of range"),
        # Found by the two parsers' differential test (tests/unit/test_parsers_agree.py):
        # Spark's parser ignores what follows the first value; Python's takes lone
        # surrogates and overflows its stack on deep nesting.
        ("trailing text", with_() + b" and more", "not JSON"),
        ("a second object after the first", with_() + with_(seq=8), "not JSON"),
        ("a comment after the object", with_() + b" // note", "not JSON"),
        ("a lone surrogate escape", raw_with("run", '"r\\ud800"'), "not JSON"),
        ("a literal and a stray bracket", b"\tnull]", "not JSON"),
        ("nested 65 levels deep", raw_with("note", "[" * 64 + "]" * 64), "not JSON"),
        ("nested 2,000 levels deep", b"[" * 2000 + b"]" * 2000, "not JSON"),
        # Accepted by the broker compressed (INJECTING_PRODUCER), 2 MB once a job holds it:
        # its letter must be cut to fit a produce request (deadletters.bounded).
        ("2 MB once decompressed", with_(note="x" * 2_000_000), "larger than 4096 bytes"),
        ("valid, nested 64 levels deep", raw_with("note", "[" * 63 + "]" * 63), None),
        ("valid with a surrogate pair escape", raw_with("station", '"s\\ud83d\\ude00"'), None),
        ("valid with 1,000 escapes in a string", raw_with("note", '"' + '\\"' * 1000 + '"'), None),
    ]


def bad_cases(run: str = "r1") -> list[tuple[str, bytes | None, str]]:
    """The cases the contract refuses."""
    return [(case, value, reason) for case, value, reason in cases(run) if reason]


CONFLICT_CASE = "another version of a stored reading"


def conflicting_pair(run: str) -> tuple[bytes, bytes]:
    """Two valid readings with one identity (run, sensor, seq) and other temperatures:
    a sink that stores each reading once keeps the first and letters the second
    (deadletters.CONFLICTING_DUPLICATE); to every other job they are two readings. Their
    run is not the scenario's, so its accounting does not count them."""
    reading = {**_good(f"{run}-conflict"), "sensor": "sensor-conflict"}
    return json.dumps(reading).encode(), json.dumps({**reading, "temperature": 22.5}).encode()


@dataclass(frozen=True)
class Injected:
    """A bad record as written: where it is, what it is and why the contract (or, for a
    conflicting version, a deduplicating sink) refuses it."""
    case: str
    topic: str
    partition: int
    offset: int
    value: bytes | None
    reason: str
    deduplicating_only: bool = False  # letters expected from the sinks that store each reading once


_lock = threading.Lock()
_injected: list[Injected] | None = None


@contextlib.contextmanager
def injecting() -> Iterator[list[Injected]]:
    """While open, generator.produce() also writes every bad case once to its topic (from
    any thread: the scenarios produce from worker threads too); yields what was written."""
    global _injected
    with _lock:
        if _injected is not None:
            raise RuntimeError("bad input is already being injected")
        _injected = out = []
    try:
        yield out
    finally:
        with _lock:
            _injected = None


# As a careless producer may write: compressed, with a client limit above the broker's
# (which it checks against the compressed batch).
INJECTING_PRODUCER = {"compression.type": "zstd", "message.max.bytes": 8_000_000}


def inject_if_asked(topic: str, run: str) -> None:
    """Called by generator.produce before its readings: write the bad cases to `topic`
    (acks=all, so each one's partition and offset are known), when injecting."""
    with _lock:
        sink = _injected
    if sink is None:
        return
    producer = kafka.producer(**INJECTING_PRODUCER)
    bad = bad_cases(run)
    written: list[Injected] = []
    errors: list[str] = []

    def delivered(case: str, value: bytes | None, reason: str):
        def on_delivery(err, msg) -> None:
            if err is not None:
                errors.append(f"{case}: {err}")
            else:
                written.append(Injected(case, topic, msg.partition(), msg.offset(), value, reason,
                                        deduplicating_only=case == CONFLICT_CASE))
        return on_delivery

    for i, (case, value, reason) in enumerate(bad):
        producer.produce(topic, key=f"bad-{run}-{i}", value=value, on_delivery=delivered(case, value, reason))
    # One key: one partition, so the stored version comes first.
    stored, conflicting = conflicting_pair(run)
    producer.produce(topic, key=f"conflict-{run}", value=stored)
    producer.produce(topic, key=f"conflict-{run}", value=conflicting, on_delivery=delivered(
        CONFLICT_CASE, conflicting, dead_letters.CONFLICTING_DUPLICATE))
    left = producer.flush(60)
    if left or errors:
        raise RuntimeError(f"bad input to {topic} not acknowledged: {left} pending, errors {errors[:3]}")
    with _lock:
        sink.extend(written)


@dataclass
class JobReport:
    """What one job made of the bad records of the topics it streams from."""
    job: str
    expected: int = 0
    lettered: int = 0
    wrong_reason: list[str] = field(default_factory=list)
    wrong_value: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.expected > 0 and not (self.wrong_reason or self.wrong_value or self.missing)


def lettering_readers(jobs: Sequence[str]) -> list[str]:
    """The jobs among `jobs` that stream from a readings topic (catalogue schema:
    reading) and have a dead-letter topic: those the suite holds to the contract."""
    specs, topics = catalogue.jobs(), catalogue.load()["topics"]
    readings = {t["name"] for t in topics if t.get("schema") == "reading"}
    return [j for j in jobs if specs[j].get("deadletter") and readings & set(specs[j]["inputs"])]


def expected_jobs(jobs: Sequence[str], topic: str, deduplicating_only: bool = False) -> list[str]:
    """The jobs among `jobs` that must letter a bad record of `topic`: those with a
    dead-letter topic that stream from it (and store each reading once, for a
    conflicting version)."""
    specs = catalogue.jobs()
    return [j for j in jobs if specs[j].get("deadletter") and topic in specs[j]["inputs"]
            and (not deduplicating_only or catalogue.job(j).stores_each_reading_once)]


def judge(injected: Sequence[Injected], jobs: Sequence[str], letters: Sequence) -> dict[str, JobReport]:
    """Per job of a pattern, each injected record of its inputs against the letters
    (dlq.Letter) of that job: found, with the contract's reason and the record's own
    value (pure)."""
    by_source: dict[tuple[str, str, str, str], list] = {}
    for x in letters:
        h = x.headers
        key = (h.get("job"), h.get("source.topic"), h.get("source.partition"), h.get("source.offset"))
        by_source.setdefault(key, []).append(x)
    reports: dict[str, JobReport] = {}
    for bad in injected:
        for job in expected_jobs(jobs, bad.topic, bad.deduplicating_only):
            r = reports.setdefault(job, JobReport(job))
            r.expected += 1
            found = by_source.get((job, bad.topic, str(bad.partition), str(bad.offset)), [])
            if not found:
                r.missing.append(bad.case)
                continue
            r.lettered += 1
            if any(x.reason != bad.reason for x in found):
                r.wrong_reason.append(f"{bad.case}: {sorted({x.reason for x in found})} instead of {bad.reason!r}")
            if not all(carries(x, bad.value) for x in found):
                r.wrong_value.append(bad.case)
    return reports


def carries(letter, value: bytes | None) -> bool:
    """Whether a letter (dlq.Letter) holds the record's value: whole, or, cut to fit a
    produce request (deadletters.bounded), its prefix with the whole value's size and
    digest (pure)."""
    if not dead_letters.is_truncated(letter.headers):
        return letter.value == value
    whole = value or b""
    return (letter.value == whole[:dead_letters.PREFIX_BYTES]
            and letter.headers.get("original.size") == str(len(whole))
            and letter.headers.get("original.sha256") == hashlib.sha256(whole).hexdigest())

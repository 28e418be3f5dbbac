"""Kafka's own VerifiableProducer and VerifiableConsumer (the kafka-tools jar), and the
accounting of what they report: acked, lost, duplicated, the longest produce stall.

The producer prints one JSON line per acknowledged (or failed) send; its values are
increasing integers with a per-run prefix ("<prefix>.<n>"). The consumer, with
--verbose, prints every record it reads. Lost = acked values never read back;
duplicated = values read more than once. Both tools connect as a catalogue user.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from pattern_harness.kafka_tool import kafka_tool_path

PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
CONSUMER = "org.apache.kafka.tools.VerifiableConsumer"
# The tool hard-codes retries=0 unless given a producer config: these are the
# platform's guarantee settings (acks=all comes from --acks -1).
PRODUCER_SETTINGS = {
    "enable.idempotence": "true",
    "retries": "2147483647",
    "max.in.flight.requests.per.connection": "5",
    "delivery.timeout.ms": "300000",
    "request.timeout.ms": "15000",
    "linger.ms": "5",
}


def tool_config(user: str, extra: dict[str, str], name: str) -> Path:
    """The user's client properties plus `extra`, in a private file beside them."""
    base = credentials.java_properties(user).read_text()
    path = credentials.java_config_dir() / f"{user}-{name}.properties"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(base + "".join(f"{k}={v}\n" for k, v in extra.items()))
    return path


@dataclass
class ProducerRun:
    """A running VerifiableProducer; a reader thread timestamps every acknowledgement."""

    proc: subprocess.Popen
    acked: dict[str, float] = field(default_factory=dict)
    failed: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    last_ack: float = 0.0
    longest_gap: float = 0.0
    gap_ended_at: float = 0.0

    def read(self) -> None:
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            now = time.monotonic()
            if event.get("name") == "producer_send_success":
                gap = now - (self.last_ack or self.started)
                if self.last_ack and gap > self.longest_gap:
                    self.longest_gap, self.gap_ended_at = gap, now
                self.last_ack = now
                self.acked[event["value"]] = now
            elif event.get("name") == "producer_send_error":
                self.failed[event.get("exception", "?").split(":")[0]] += 1

    def acks_since(self, t: float) -> int:
        return sum(1 for at in list(self.acked.values()) if at >= t)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError(f"VerifiableProducer did not finish within {timeout:.0f}s "
                               f"({len(self.acked)} acked so far)") from None


def start_producer(topic: str, count: int, throughput: int, prefix: int, user: str = credentials.DEFAULT_USER,
                   log: Path | None = None) -> ProducerRun:
    config = tool_config(user, PRODUCER_SETTINGS, "verifiable-producer")
    cmd = [kafka_tool_path(), PRODUCER, "--bootstrap-server", kafka.bootstrap_servers(), "--topic", topic,
           "--max-messages", str(count), "--throughput", str(throughput), "--acks", "-1",
           "--value-prefix", str(prefix), "--command-config", str(config)]
    stderr = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True)
    run = ProducerRun(proc)
    threading.Thread(target=run.read, daemon=True).start()
    return run


@dataclass
class Consumed:
    values: Counter
    seconds: float


def consume_all(topic: str, expected: set[str], group: str, user: str = credentials.DEFAULT_USER,
                quiet_seconds: float = 30.0, timeout: float = 600.0, log: Path | None = None) -> Consumed:
    """Read the topic from the start with VerifiableConsumer until every expected value
    was seen, or nothing new arrived for quiet_seconds (then what is missing is lost)."""
    config = tool_config(user, {"auto.offset.reset": "earliest"}, "verifiable-consumer")
    cmd = [kafka_tool_path(), CONSUMER, "--bootstrap-server", kafka.bootstrap_servers(), "--topic", topic,
           "--group-id", group, "--reset-policy", "earliest", "--verbose", "--command-config", str(config)]
    stderr = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True)
    values: Counter = Counter()
    t0 = last_new = time.monotonic()
    lock = threading.Lock()

    def read() -> None:
        nonlocal last_new
        for line in proc.stdout:
            if '"record_data"' not in line:
                continue
            value = json.loads(line).get("value")
            with lock:
                values[value] += 1
                last_new = time.monotonic()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def done() -> bool:
        with lock:
            seen_all = expected <= values.keys()
            quiet = time.monotonic() - last_new > quiet_seconds
        return seen_all or quiet or proc.poll() is not None

    try:
        kafka.wait_until(done, timeout=timeout, interval=0.5, what=f"VerifiableConsumer to read {topic}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(timeout=10)
    return Consumed(values, time.monotonic() - t0)


@dataclass(frozen=True)
class Account:
    acked: int
    lost: int
    duplicated: int
    failed_sends: int


def account(acked: set[str], consumed: Counter, failed_sends: int = 0) -> Account:
    """Lost: acknowledged and never read. Duplicated: read more than once."""
    return Account(acked=len(acked), lost=len(acked - consumed.keys()),
                   duplicated=sum(n - 1 for n in consumed.values() if n > 1), failed_sends=failed_sends)

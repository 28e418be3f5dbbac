"""Kafka's own perf tools (ProducerPerformance, ConsumerPerformance) from the local
distribution, run like bin/kafka-*-perf-test.sh (-Xmx512M, full JIT: the project's
kafka-tool wrapper limits the JIT for fast start-up, which would handicap the
baseline), and their final report lines parsed."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from pattern_harness.kafka_tool import kafka_tool_path

PRODUCER = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER = "org.apache.kafka.tools.ConsumerPerformance"


def java_command(main_class: str) -> list[str]:
    """java + classpath of the distribution, the JVM path taken from its kafka-tool."""
    tool = Path(kafka_tool_path())
    java = re.search(r"exec (\S+/java)\b", tool.read_text())
    home = tool.parent.parent
    return [java.group(1) if java else "java", "-Xmx512M", "-server",
            f"-Dlog4j2.configurationFile={home / 'config' / 'tools-log4j2.properties'}",
            "-cp", f"{home / 'libs'}/*", main_class]


def _run(cmd: list[str], timeout: float, what: str) -> tuple[str, float]:
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{what} exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-800:]}")
    return done.stdout, time.monotonic() - t0


# "100000 records sent, 45045.0 records/sec (4.30 MB/sec), 512.34 ms avg latency, 900.00 ms max
#  latency, 480 ms 50th, 850 ms 95th, 890 ms 99th, 899 ms 99.9th."
# With --warmup-records a second summary follows: "900000 steady state records sent, ...".
FINAL_PRODUCER = re.compile(
    r"(?P<records>\d+)(?P<steady> steady state)? records sent, (?P<rps>[\d.]+) records/sec "
    r"\((?P<mbps>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency, (?P<p50>\d+) ms 50th, "
    r"(?P<p95>\d+) ms 95th, (?P<p99>\d+) ms 99th")


def parse_producer(stdout: str) -> dict[str, float]:
    """The summary of ProducerPerformance: its steady-state line when it printed one (a
    run with warm-up records), else its final summary line (interim lines differ)."""
    matches = list(FINAL_PRODUCER.finditer(stdout))
    if not matches:
        raise ValueError(f"no ProducerPerformance summary in: {stdout.strip()[-400:]!r}")
    m = next((m for m in matches if m["steady"]), matches[-1])
    return {"records": int(m["records"]), "records_per_s": float(m["rps"]), "mb_per_s": float(m["mbps"]),
            "latency_avg_ms": float(m["avg"]), "latency_p50_ms": float(m["p50"]),
            "latency_p99_ms": float(m["p99"])}


def parse_consumer(stdout: str) -> dict[str, float]:
    """ConsumerPerformance's header + one CSV row -> its columns. The headline rate is the
    fetch rate (fetch.nMsg.sec: group join/rebalance time excluded), like the Python
    consumer's, which assigns its partitions without a group."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    header = next((i for i, line in enumerate(lines) if line.startswith("start.time")), None)
    if header is None or header + 1 >= len(lines):
        raise ValueError(f"no ConsumerPerformance report in: {stdout.strip()[-400:]!r}")
    names = [n.strip() for n in lines[header].split(",")]
    values = [v.strip() for v in lines[header + 1].split(",")]
    row = dict(zip(names, values, strict=False))
    return {"records": int(float(row["data.consumed.in.nMsg"])), "records_per_s": float(row["fetch.nMsg.sec"]),
            "mb_per_s": float(row["fetch.MB.sec"]), "total_records_per_s": float(row["nMsg.sec"]),
            "rebalance_ms": float(row["rebalance.time.ms"]), "fetch_ms": float(row["fetch.time.ms"])}


def _connection(bootstrap: str | None) -> list[str]:
    """The local cluster as the bench's catalogue user, or another cluster (the plain-text
    baseline of bench.security_cost) given by its bootstrap, with no credentials."""
    if bootstrap is not None:
        return ["--bootstrap-server", bootstrap]
    return ["--bootstrap-server", kafka.bootstrap_servers(), "--command-config", str(credentials.java_properties())]


def produce(topic: str, count: int, size: int, props: dict[str, str],
            bootstrap: str | None = None, warmup: int = 0) -> dict[str, float]:
    """`warmup` records first whose figures are left out (--warmup-records: JVM start,
    JIT, metadata and the idempotent producer id count against them, not the figure)."""
    cmd = [*java_command(PRODUCER), *_connection(bootstrap), "--topic", topic,
           "--num-records", str(count), "--record-size", str(size), "--throughput", "-1",
           *(["--warmup-records", str(warmup)] if warmup else []),
           "--command-property", *[f"{k}={v}" for k, v in props.items()]]
    out, wall = _run(cmd, timeout=120 + count / 2_000, what="ProducerPerformance")
    return {**parse_producer(out), "wall_s": wall, "warmup_records": warmup}


def consume(topic: str, count: int, group: str, bootstrap: str | None = None) -> dict[str, float]:
    cmd = [*java_command(CONSUMER), *_connection(bootstrap), "--topic", topic,
           "--num-records", str(count), "--group", group, "--timeout", "30000"]
    out, wall = _run(cmd, timeout=120 + count / 5_000, what="ConsumerPerformance")
    result = parse_consumer(out)
    if result["records"] < count:
        raise RuntimeError(f"ConsumerPerformance read {result['records']} of {count} records of {topic}")
    return {**result, "wall_s": wall}


"""What the secure default costs: Kafka's ProducerPerformance and ConsumerPerformance
against the local cluster (TLS on every listener, SCRAM-SHA-512 for clients, mutual
TLS between nodes, ACLs) and against its plain-text copy (bench.plaintext_cluster),
both in this run. The sides alternate, repeat by repeat, so a drift of the shared host
(page cache, another tenant) falls on both; the figure is the median of the repeats
and the ratio is secure / plain text."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench import java_perf, topics
from bench.grid import MODES
from bench.plaintext_cluster import PlaintextCluster
from bench.stats import ratio

SIDES = ("plaintext", "secure")
# The guarantee mode of the secure default: RF 3, acks=all, idempotence.
MODE = "rf3-acks-all"


@dataclass(frozen=True)
class SecurityGrid:
    sizes: tuple[int, ...]
    count: int  # records per produce run: long enough to be past JVM start-up (>= 15 s here)
    partitions: int
    repeats: int


def security_grid(quick: bool) -> SecurityGrid:
    if quick:
        return SecurityGrid(sizes=(1024,), count=100_000, partitions=6, repeats=1)
    return SecurityGrid(sizes=(100, 1024), count=1_000_000, partitions=6, repeats=2)


def run(g: SecurityGrid, run_id: str, plain: PlaintextCluster, progress) -> list[dict]:
    """One measurement dict per (size, repeat, side, op)."""
    rf, props = MODES[MODE]
    out: list[dict] = []
    # The baseline's JVMs were just started, the local cluster's have run for a while:
    # one unrecorded produce per side first, so JIT warm-up is not counted against the baseline.
    for side in SIDES:
        admin = plain.admin() if side == "plaintext" else None
        topic = topics.name(f"{run_id}-warmup", SIDES.index(side), g.partitions, rf)
        topics.create(topic, g.partitions, rf, admin=admin)
        try:
            java_perf.produce(topic, g.count // 2, max(g.sizes), props,
                              bootstrap=plain.bootstrap if side == "plaintext" else None)
        finally:
            topics.delete([topic], admin=admin)
        progress(f"security cost: {side} side warmed up ({g.count // 2:,} records, not counted)")
    for size in g.sizes:
        for repeat in range(g.repeats):
            # plain text first on even repeats, secure first on odd ones
            order = SIDES if repeat % 2 == 0 else SIDES[::-1]
            for side in order:
                bootstrap = plain.bootstrap if side == "plaintext" else None
                admin = plain.admin() if side == "plaintext" else None
                topic = topics.name(f"{run_id}-sec", len(out), g.partitions, rf)
                topics.create(topic, g.partitions, rf, admin=admin)
                try:
                    for op, metrics in (
                        ("produce", java_perf.produce(topic, g.count, size, props, bootstrap=bootstrap)),
                        ("consume", java_perf.consume(topic, g.count, f"bench-{run_id}-sec-{len(out)}",
                                                      bootstrap=bootstrap)),
                    ):
                        out.append({"size": size, "repeat": repeat, "side": side, "op": op, **metrics})
                        progress(f"security cost {size} B #{repeat + 1} {side:9s} {op:8s} "
                                 f"{metrics['records_per_s']:>10,.0f} rec/s {metrics['mb_per_s']:>7.1f} MB/s")
                finally:
                    topics.delete([topic], admin=admin)
    return out


def summary(measurements: list[dict]) -> list[dict]:
    """Per (size, op): the median rec/s and MB/s of each side, and secure / plain text.
    Pure: the report's table and the unit tests read it."""
    rows = []
    keys = sorted({(m["size"], m["op"]) for m in measurements}, key=lambda k: (k[0], k[1] != "produce"))
    for size, op in keys:
        row: dict = {"size": size, "op": op}
        for side in SIDES:
            ms = [m for m in measurements if (m["size"], m["op"], m["side"]) == (size, op, side)]
            row[side] = {"runs": len(ms),
                         "records_per_s": statistics.median(m["records_per_s"] for m in ms) if ms else None,
                         "mb_per_s": statistics.median(m["mb_per_s"] for m in ms) if ms else None,
                         "latency_p99_ms": statistics.median(m["latency_p99_ms"] for m in ms)
                         if ms and all("latency_p99_ms" in m for m in ms) else None}
        row["secure_over_plaintext"] = ratio(row["secure"]["records_per_s"], row["plaintext"]["records_per_s"])
        rows.append(row)
    return rows

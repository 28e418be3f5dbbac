"""Pure arithmetic of the benchmark: rates, ratios, percentiles (no I/O)."""

from __future__ import annotations

import math
from collections.abc import Sequence

MB = 1024 * 1024  # the perf tools' "MB" is MiB


def rate(count: float, seconds: float) -> float | None:
    """count per second, None when nothing was timed."""
    return count / seconds if seconds and seconds > 0 else None


def mb_per_s(records: float, record_bytes: float, seconds: float) -> float | None:
    r = rate(records * record_bytes, seconds)
    return None if r is None else r / MB


def ratio(value: float | None, baseline: float | None) -> float | None:
    """value / baseline, None when either is missing or the baseline is zero."""
    if value is None or baseline is None or baseline == 0:
        return None
    return value / baseline


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (pct in 0..100) of unsorted values; None if empty."""
    if not values:
        return None
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile {pct} is not in 0..100")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def fmt(value: float | None, digits: int = 0) -> str:
    """A number for the table: thousands separators, '-' when missing."""
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def arrival_latencies(sent_ms: Sequence[float], offset: int, timeline: Sequence[tuple[float, int]]) -> list[float]:
    """Latency of each sent record when only the sink's record count is observable:
    record k (0-based, `offset` records of the run were in the sink before) has arrived
    at the first poll where the count reaches offset + k + 1. timeline = [(wall ms,
    count)] in poll order. Records never reached are left out."""
    out, i = [], 0
    for k, sent in enumerate(sent_ms):
        need = offset + k + 1
        while i < len(timeline) and timeline[i][1] < need:
            i += 1
        if i == len(timeline):
            break
        out.append(timeline[i][0] - sent)
    return out


def flow_rate(timeline: Sequence[tuple[float, int]], before: int, total: int) -> float | None:
    """Records/s into the sink once a burst flows: from the first poll showing more than
    `before` records to the first showing `total` (the records of that first poll
    excluded). None when the burst landed within one poll or never completed."""
    first = next(((t, n) for t, n in timeline if n > before), None)
    done = next((t for t, n in timeline if n >= total), None)
    if first is None or done is None or done <= first[0]:
        return None
    return (total - first[1]) / ((done - first[0]) / 1000)


# The phases of a micro-batch as Spark's progress reports them (durationMs), in order.
BATCH_PHASES = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets",
                "triggerExecution")


def batch_breakdown(progresses: Sequence[dict]) -> dict[str, float | int | None]:
    """Where a query's micro-batches spend their time: the median of each phase (ms)
    over the batches that read something, the state stores' commit time summed over
    the query's stateful operators, and the median rows per batch. triggerExecution is
    the whole batch; addBatch is running the plan and writing the sink."""
    busy = [p for p in progresses if p.get("numInputRows")]
    out: dict[str, float | int | None] = {"batches": len(busy),
                                          "rows": percentile([p["numInputRows"] for p in busy], 50)}
    for phase in BATCH_PHASES:
        out[phase] = percentile([p["durationMs"][phase] for p in busy if phase in (p.get("durationMs") or {})], 50)
    out["stateCommit"] = percentile([sum(op.get("commitTimeMs", 0) for op in p["stateOperators"])
                                     for p in busy if p.get("stateOperators")], 50)
    return out

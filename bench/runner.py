"""Runs the cells: for each, a fresh bench topic; Java then Python produce `count`
records each into it; then ConsumerPerformance, the Python consumer and Spark each read
the whole topic. One measurement dict per (cell, op, tool)."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict

from bench import ceiling, java_perf, python_perf, spark_perf, topics
from bench.grid import MODES, Cell

# The share of each producer's records left out of its figures as warm-up: client
# start-up, metadata and JIT would otherwise decide a short cell. ConsumerPerformance's
# fetch rate leaves out its group join; Spark's reader is warmed once per session
# (spark_perf); the Python consumer is timed whole (run_cell).
WARMUP_FRACTION = 0.2


def progress(message: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_cell(cell: Cell, index: int, run: str, spark: bool = True) -> list[dict]:
    rf, props = MODES[cell.mode]
    topic = topics.name(run, index, cell.partitions, rf)
    topics.create(topic, cell.partitions, rf)
    out: list[dict] = []

    def measure(op: str, tool: str, fn, *args) -> None:
        with ceiling.CpuBusy() as cpu:
            metrics = fn(*args)
        out.append({"cell": asdict(cell), "op": op, "tool": tool, **metrics, "cpu_busy": cpu.fraction})
        progress(f"{cell.label}: {op:8s} {tool:6s} {metrics['records_per_s']:>12,.0f} rec/s "
                 f"{metrics['mb_per_s']:>8.1f} MB/s")

    warmup = int(cell.count * WARMUP_FRACTION)
    try:
        measure("produce", "java", java_perf.produce, topic, cell.count, cell.size, props, None, warmup)
        measure("produce", "python", python_perf.produce, topic, cell.count, cell.size, props, warmup)
        total = 2 * cell.count
        measure("consume", "java", java_perf.consume, topic, total, f"bench-{run}-{index}-java")
        # Timed whole, from assign() on, like ConsumerPerformance's fetch time: a warm-up
        # left out would time a queue librdkafka's prefetch had already filled.
        measure("consume", "python", python_perf.consume, topic, cell.partitions, total, f"bench-{run}-{index}-py",
                cell.size)
        if spark:
            measure("consume", "spark", spark_perf.count, topic, cell.size, total)
    finally:
        topics.delete([topic])
    return out


def run_cells(cells: list[Cell], run: str, spark: bool = True) -> list[dict]:
    measurements: list[dict] = []
    for i, cell in enumerate(cells):
        progress(f"cell {i + 1}/{len(cells)}: {cell.label}")
        measurements += run_cell(cell, i, run, spark)
    return measurements

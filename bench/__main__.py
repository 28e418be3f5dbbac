"""python -m bench [--quick]: run the benchmark, write bench/results/<stamp>.{json,md,png},
print the summary tables."""

from __future__ import annotations

import argparse
import os
import platform
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from bench import ceiling, pipeline, plots, report, runner, security_cost, stages, sustained, topics
from bench.grid import MODES, grid
from bench.plaintext_cluster import PlaintextCluster
from kafka_patterns.config.catalogue import ROOT
from platform_cli import console

RESULTS = Path(__file__).resolve().parent / "results"
# Where the local Kafka nodes keep their data: the disk the ceiling is measured on.
DATA_DIR = ROOT / ".run"


def host() -> dict:
    import confluent_kafka
    import pyspark

    from kafka_patterns.config.catalogue import versions

    return {"cpus": os.cpu_count(), "platform": platform.platform(terse=True), "python": platform.python_version(),
            "kafka": versions()["kafka_version"], "spark": pyspark.__version__,
            "confluent_kafka": confluent_kafka.__version__}


def measure_security(g: security_cost.SecurityGrid, run: str) -> dict:
    """The secure cluster against its plain-text copy, started and removed here."""
    runner.progress("starting the plain-text baseline cluster (a copy of the local nodes without security)")
    with PlaintextCluster(ROOT / ".run", ROOT / ".run" / "logs") as plain:
        measurements = security_cost.run(g, run, plain, runner.progress)
    return {"grid": asdict(g), "measurements": measurements, "summary": security_cost.summary(measurements)}


def measured_part(name: str, measure: Callable[[], dict | list], failed: list[str]) -> dict | list | None:
    """One later part of the run (the pipelines, the security cost): its figures, or None
    with its error added to `failed`, so that the parts measured before it, minutes of
    them, are still written."""
    try:
        return measure()
    except Exception as e:
        traceback.print_exc()
        failed.append(f"{name}: {e}")
        return None


def main(argv: list[str] | None = None) -> int:
    # A SIGTERM (kill, pkill, a CI timeout) unwinds like Ctrl-C: subprocess.run kills the
    # perf tool it waits on and the finally blocks delete the bench topics and stop the
    # plain-text cluster. By default the process would just end, and its ProducerPerformance
    # go on writing into a bench topic for minutes, into the next run's measurements.
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    # The bench's own catalogue user (its topics, groups and the pipelines' inputs); the
    # benchmarked jobs run as themselves (bench/pipeline.py).
    os.environ.setdefault("KP_KAFKA_USER", "bench")
    # Before this process's Spark session starts: real-time mode needs a task slot per
    # input partition of every query it runs (bench/stages.py); micro-batch queries use
    # as many tasks as partitions whatever the slots.
    os.environ.setdefault("SPARK_MASTER", f"local[{stages.SLOTS}]")
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", default=os.environ.get("QUICK", "") not in ("", "0"),
                   help="reduced grid, under 3 minutes (also QUICK=1)")
    p.add_argument("--no-pipeline", action="store_true", help="skip part 3 (Spark jobs end to end)")
    p.add_argument("--no-security", action="store_true", help="skip the security cost (no plain-text baseline)")
    p.add_argument("--only-security", action="store_true",
                   help="only the security cost: the secure cluster vs its plain-text copy")
    p.add_argument("--only-pipeline", action="store_true",
                   help="only part 3: the Spark jobs end to end and the stages' latency per mode")
    p.add_argument("--only-stages", action="store_true",
                   help="only the stateless stages: Spark micro-batch, real-time mode and Kafka Streams side by side")
    p.add_argument("--only-sustained", action="store_true",
                   help="only the highest input rate each mode sustains (Spark micro-batch, real-time, Kafka Streams)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    g = grid(a.quick)
    # The jobs' Spark driver and librdkafka log to .run/logs/bench.log, not between the
    # progress lines (a real-time query stopped mid-batch logs its aborted commits).
    console.quiet("bench", verbose=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    run = stamp.lower()
    t0 = time.monotonic()
    stale = topics.leftovers()
    if stale:
        runner.progress(f"deleting {len(stale)} bench topics left by an interrupted run")
        topics.delete(stale)
    only = a.only_security or a.only_pipeline or a.only_stages or a.only_sustained
    cells = [] if only else g.cells()
    with_pipeline = not (a.no_pipeline or only) or a.only_pipeline
    with_stages = with_pipeline or a.only_stages
    with_sustained = with_stages or a.only_sustained
    with_security = not (a.no_security or only) or a.only_security
    parts = [f"{len(cells)} cells"] * bool(cells) + ["the pipeline jobs"] * with_pipeline \
        + ["the stages (Spark and Kafka Streams)"] * with_stages \
        + ["the highest sustained rates"] * with_sustained + ["the security cost"] * with_security
    runner.progress(f"{'QUICK' if a.quick else 'full'} benchmark {stamp}: {', then '.join(parts)}")
    disk = None
    if cells:
        runner.progress(f"measuring the disk's synced write bandwidth ({ceiling.PROBE_MIB} MiB in {DATA_DIR})")
        disk = ceiling.disk_sync_write_mb_s(DATA_DIR)
        runner.progress(f"disk: {disk:,.0f} MiB/s synced; the RF 3 ceiling of one host is {disk / 3:,.0f} MiB/s")
    try:
        measurements = runner.run_cells(cells, run)
    finally:
        topics.delete(topics.leftovers(run))
    results = {"started": stamp, "quick": a.quick, "host": {**host(), "disk_sync_write_mb_s": disk},
               # The produce table's figures (the main grid), not the growth cells.
               "ceiling": ceiling.furthest([m for m in measurements if m["cell"] in [asdict(c) for c in g.main]],
                                           disk, {m: rf for m, (rf, _) in MODES.items()}),
               "grid": {section: [asdict(c) for c in getattr(g, section)] if cells else []
                        for section in ("main", "counts", "partitions")},
               "measurements": measurements}
    failed: list[str] = []
    if with_pipeline:
        raw = report.find(measurements, "consume", "spark", **results["grid"]["main"][0]) if cells else None
        results["pipeline"] = measured_part("the pipelines", lambda: pipeline.run_all(
            g.pipeline_rate, g.pipeline_seconds, g.pipeline_burst, raw and raw["records_per_s"]), failed) or []
    if with_stages:
        results["stages"] = measured_part("the stages", lambda: stages.run_all(g.pipeline_rate, g.pipeline_seconds),
                                          failed) or []
    if with_sustained:
        results["sustained"] = measured_part("the sustained rates", lambda: sustained.run_all(a.quick), failed) or []
    if with_security:
        security = measured_part("the security cost", lambda: measure_security(
            security_cost.security_grid(a.quick), run), failed)
        if security is not None:
            results["security"] = security
    results["failed"] = failed
    results["seconds"] = time.monotonic() - t0
    pngs = plots.write(results, a.out, stamp)
    js, md = report.write(results, a.out, stamp, pngs)
    print(f"\n{report.tables(results, 'simple')}\n")
    shown = [js.name, md.name, *(Path(x).name for x in pngs)]
    print(f"{'QUICK ' if a.quick else ''}run took {results['seconds']:.0f} s; in {a.out}: {', '.join(shown)}")
    if failed:
        print(f"FAILED: {'; '.join(failed)} (its traceback above; the other parts' figures are written)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

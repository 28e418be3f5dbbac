"""python -m bench [--quick]: run the benchmark, write bench/results/<stamp>.{json,md,png},
print the summary tables."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench import pipeline, plots, report, runner, topics
from bench.grid import grid

RESULTS = Path(__file__).resolve().parent / "results"


def host() -> dict:
    import confluent_kafka
    import pyspark

    from kafka_patterns.catalogue import versions

    return {"cpus": os.cpu_count(), "platform": platform.platform(terse=True), "python": platform.python_version(),
            "kafka": versions()["kafka_version"], "spark": pyspark.__version__,
            "confluent_kafka": confluent_kafka.__version__}


def main(argv: list[str] | None = None) -> int:
    # The bench's own catalogue user (its topics, groups and the pipelines' inputs); the
    # benchmarked jobs run as themselves (bench/pipeline.py).
    os.environ.setdefault("KP_KAFKA_USER", "bench")
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", default=os.environ.get("QUICK", "") not in ("", "0"),
                   help="reduced grid, under 3 minutes (also QUICK=1)")
    p.add_argument("--no-pipeline", action="store_true", help="skip part 3 (Spark jobs end to end)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    g = grid(a.quick)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    run = stamp.lower()
    t0 = time.monotonic()
    stale = topics.leftovers()
    if stale:
        runner.progress(f"deleting {len(stale)} bench topics left by an interrupted run")
        topics.delete(stale)
    cells = g.cells()
    runner.progress(f"{'QUICK' if a.quick else 'full'} benchmark {stamp}: {len(cells)} cells, then the pipeline jobs")
    try:
        measurements = runner.run_cells(cells, run)
    finally:
        topics.delete(topics.leftovers(run))
    results = {"started": stamp, "quick": a.quick, "host": host(),
               "grid": {"main": [asdict(c) for c in g.main], "counts": [asdict(c) for c in g.counts],
                        "partitions": [asdict(c) for c in g.partitions]},
               "measurements": measurements}
    if not a.no_pipeline:
        raw = report.find(measurements, "consume", "spark", **results["grid"]["main"][0])
        results["pipeline"] = pipeline.run_all(g.pipeline_rate, g.pipeline_seconds, g.pipeline_burst,
                                               raw and raw["records_per_s"])
    results["seconds"] = time.monotonic() - t0
    pngs = plots.write(results, a.out, stamp)
    js, md = report.write(results, a.out, stamp, pngs)
    print(f"\n{report.tables(results, 'simple')}\n")
    shown = [js.name, md.name, *(Path(x).name for x in pngs)]
    print(f"{'QUICK ' if a.quick else ''}run took {results['seconds']:.0f} s; in {a.out}: {', '.join(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

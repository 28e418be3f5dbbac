"""`make demo`: the foundation smoke check, then every pattern of the catalogue end to
end on the local cluster, and one table: pattern, records in/out, lost, duplicated,
reordered, verdict against the promised semantics, seconds."""

from __future__ import annotations

import os
import sys
import time

from tabulate import tabulate

from kafka_patterns.config import inventory
from pattern_harness import job_processes, scenarios, smoke
from pattern_harness.scenarios.base import HEADERS
from platform_cli import console, run_scenarios

# Patterns running side by side (run.run): 4 keeps a 2-core host busy while most of
# them wait on a producer's rate, a job process's JVM start or a window closing.
PARALLEL = 4


def main(argv: list[str]) -> int:
    # This driver runs some 40 small jobs over two minutes: C1 alone compiles what they
    # need (Spark's CPU over a demo 139 -> 108 s, the demo 143 -> 129 s).
    os.environ.setdefault("KP_DRIVER_JAVA_OPTIONS", job_processes.SHORT_LIVED_JVM_OPTIONS)
    verbose = "--verbose" in argv
    parallel = int(argv[argv.index("--parallel") + 1]) if "--parallel" in argv else PARALLEL
    log = console.quiet("demo", verbose)
    cluster = inventory.load()
    keys = list(scenarios.modules())
    print(f"==> make demo: every pattern end to end; each one's steps, the clients' and Spark's logs: "
          f"{os.path.relpath(log)}" + ("" if verbose else " (V=1 shows the steps)"), file=sys.stderr)
    print(f"==> cluster: {len(cluster.nodes)} KRaft nodes at {cluster.bootstrap_servers}, "
          f"Connect at {cluster.connect_url}, PostgreSQL at {cluster.postgres_host}:{cluster.postgres_port}",
          file=sys.stderr)
    t0 = time.monotonic()
    print("==> smoke: 10,000 records, acks=all + idempotence, RF 3", file=sys.stderr, flush=True)
    result = smoke.run(records=10_000)
    d = result.delivery
    rows = [["smoke (acks=all, idempotent)", d.acked, d.received, d.lost, d.duplicated, d.reordered,
             "PASS" if result.ok else "FAIL", f"{time.monotonic() - t0:.1f}"]]
    outcomes = run_scenarios.run(keys, one_line=not verbose, parallel=parallel)
    rows += [o.row() for o in outcomes]
    print(tabulate(rows, headers=HEADERS))
    for o in outcomes:
        for note in o.notes:
            print(f"  {o.pattern}: {note}")
    print(f"{len(rows)} rows, {sum(r[6] == 'PASS' for r in rows)} PASS, total {time.monotonic() - t0:.0f}s")
    return 0 if all(r[6] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run pattern scenarios on the local cluster, or list them.

    python -m kafka_patterns.run --list          # `make patterns`
    python -m kafka_patterns.run one-to-one      # `make run PATTERN=one-to-one`
    python -m kafka_patterns.run --all           # `make demo`
"""

from __future__ import annotations

import argparse
import sys
import time

from tabulate import tabulate

from kafka_patterns import catalogue, console, scenarios
from kafka_patterns.scenarios.base import HEADERS, Outcome


def listing() -> str:
    rows = []
    for pattern in catalogue.patterns().values():
        key = pattern.name
        for j in pattern.jobs:
            outputs = [*j.outputs, *([f"(dead letters) {j.deadletter}"] if j.deadletter else [])]
            rows.append([key, j.name, j.engine, ", ".join(j.inputs), ", ".join(outputs),
                         j.promise.lost, j.promise.duplicated, j.promise.order, j.schedule or ""])
            key = ""
    return tabulate(rows, headers=["PATTERN=", "job", "engine", "inputs", "outputs", "lost", "duplicated",
                                   "order", "schedule"])


def run(keys: list[str], one_line: bool = False) -> list[Outcome]:
    """Run the patterns in order. one_line: a line per pattern with its verdict (make
    demo; the steps go to its log), else a header per pattern and its steps."""
    modules = scenarios.modules()
    unknown = [k for k in keys if k not in modules]
    if unknown:
        raise SystemExit(f"unknown pattern(s) {', '.join(unknown)}; `make patterns` lists them: "
                         + ", ".join(modules))
    outcomes = []
    t0 = time.monotonic()
    for i, key in enumerate(keys, 1):
        label = f"[{i}/{len(keys)}] {key}"
        if one_line:
            print(f"  {label:<30}", end=" ", file=sys.stderr, flush=True)
        else:
            print(f"==> {label} ({time.monotonic() - t0:.0f}s elapsed)", file=sys.stderr, flush=True)
        try:
            outcome = modules[key].run()
        except Exception as e:  # one broken pattern must not hide the others' results
            print(("" if one_line else f"    {key}: ") + f"ERROR {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            raise
        result = f"{outcome.verdict} in {outcome.seconds:.1f}s" + \
            (f" ({'; '.join(outcome.failures())})" if outcome.failures() else "")
        print(result if one_line else f"    {key}: {result}", file=sys.stderr, flush=True)
        outcomes.append(outcome)
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    return tabulate([o.row() for o in outcomes], headers=HEADERS)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("patterns", nargs="*")
    p.add_argument("--list", action="store_true")
    p.add_argument("--all", action="store_true")
    a = p.parse_args(argv)
    if a.list or not (a.patterns or a.all):
        print(listing())
        return 0
    console.quiet("run", verbose=True)  # the steps stay on the terminal, the clients' and Spark's logs go
    outcomes = run(list(scenarios.modules()) if a.all else a.patterns)
    print(table(outcomes))
    for o in outcomes:
        for note in o.notes:
            print(f"  {o.pattern}: {note}")
    return 0 if all(o.verdict == "PASS" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())

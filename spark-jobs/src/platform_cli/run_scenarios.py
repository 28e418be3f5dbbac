"""Run pattern scenarios on the local cluster, or list them.

    python -m platform_cli.run_scenarios --list          # `make patterns`
    python -m platform_cli.run_scenarios one-to-one      # `make run PATTERN=one-to-one`
    python -m platform_cli.run_scenarios --all           # `make demo`
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from tabulate import tabulate

from kafka_patterns.config import catalogue
from pattern_harness import job_runs, scenarios
from pattern_harness.delivery import Delivery
from pattern_harness.scenarios.base import HEADERS, Outcome
from platform_cli import console


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


def run(keys: list[str], one_line: bool = False, parallel: int = 1) -> list[Outcome]:
    """Run the patterns, `parallel` at a time, and return their outcomes in the order of
    `keys`. one_line: a line per pattern with its verdict as it finishes (make demo; the
    steps go to its log), else a header per pattern and its steps.

    Patterns can run side by side: each has its own jobs, consumer groups and run id,
    and accounts only its run's records (scenarios.base), so what another pattern
    produces to a shared topic meanwhile is not counted. Much of a pattern's time is
    waiting (a producer's rate, a job process's JVM start, a window closing), which
    the others' work fills on a 2-core host."""
    modules = scenarios.modules()
    unknown = [k for k in keys if k not in modules]
    if unknown:
        raise SystemExit(f"unknown pattern(s) {', '.join(unknown)}; `make patterns` lists them: "
                         + ", ".join(modules))
    t0 = time.monotonic()
    done: list[str] = []
    printing = threading.Lock()
    # The terminal, taken now: while another pattern's job runs in this process,
    # sys.stderr is its log (runner.job_output).
    terminal = sys.stderr

    def one(key: str) -> Outcome:
        if not one_line:
            with printing:
                print(f"==> {key} started ({time.monotonic() - t0:.0f}s elapsed)", file=terminal, flush=True)
        started = time.monotonic()
        try:
            outcome = modules[key].run()
        except (Exception, SystemExit) as e:  # one broken pattern (a job's refusal too) must not hide the others
            job_runs.progress(f"{key}: {traceback.format_exc()}")
            outcome = errored(key, e, time.monotonic() - started)
        result = f"{outcome.verdict} in {outcome.seconds:.1f}s" + \
            (f" ({'; '.join(outcome.failures())})" if outcome.failures() else "")
        with printing:
            done.append(key)
            print(f"  [{len(done)}/{len(keys)}] {key:<26} {result}", file=terminal, flush=True)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="pattern") as pool:
        futures = [pool.submit(one, key) for key in keys]
    return [f.result() for f in futures]


def errored(key: str, error: BaseException, seconds: float) -> Outcome:
    """The row of a pattern whose run raised: FAIL, the error as its failed check."""
    jobs = [j.name for j in catalogue.patterns()[key].jobs]
    return Outcome(key, jobs, Delivery(0, 0, 0, 0, 0), {}, 0, 0, seconds,
                   checks={f"ran to the end ({type(error).__name__}: {error})": False})


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

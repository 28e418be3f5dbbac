"""The faults tier's matrix: every pattern × each failure mode its catalogue entry says
its promise is tested under (patterns.<pattern>.faults). Each case runs the pattern
with that one fault injected mid-stream (sized by its scenario's FAULT_RUN) and holds
the outcome to the promise of its jobs: nothing lost where the promise says none,
nothing duplicated where it says none, order kept where it promises one, and the
pattern's own checks (a zombie fenced, a crashed batch written again, partitions
moved to survivors, ...). A case whose fault did not land fails too: a run that
injected nothing would pass for nothing."""

import fcntl
import json
import os

import pytest
from tabulate import tabulate

from helpers import ROOT, one_run_at_a_time
from kafka_patterns.config import catalogue
from pattern_harness import scenarios
from pattern_harness.job_processes import FailureMode

# What each case measured, written as one table when the module ends (failed cases too).
# The Makefile runs the cases on several workers (pytest-xdist): each adds its rows to
# those the other workers of the same run wrote (ROWS_STORE, under a lock).
TABLE = ROOT / ".run" / "logs" / "fault-matrix.md"
ROWS_STORE = TABLE.with_suffix(".jsonl")
HEADERS = ["pattern", "fault", "where it landed", "in", "out", "lost", "duplicated", "reordered", "verdict",
           "seconds"]
ROWS: list[list] = []

CASES = [pytest.param(name, FailureMode(mode), id=f"{name}-{mode}", marks=one_run_at_a_time(name))
         for name, pattern in catalogue.patterns().items() for mode in pattern.faults]


def write_table(rows: list[list]) -> None:
    """The table of this run's rows: this process's and, under pytest-xdist, those the
    other workers of the same run (PYTEST_XDIST_TESTRUNUID) stored before."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    with open(TABLE.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stored = [json.loads(line) for line in ROWS_STORE.read_text().splitlines()] if ROWS_STORE.exists() else []
        everyone = [r["row"] for r in stored if run and r["run"] == run] + rows
        ROWS_STORE.write_text("".join(json.dumps({"run": run, "row": r}) + "\n" for r in everyone))
        order = [(c.values[0], c.values[1].value) for c in CASES]
        everyone.sort(key=lambda r: order.index((r[0], r[1])) if (r[0], r[1]) in order else len(order))
        TABLE.write_text(tabulate(everyone, headers=HEADERS, tablefmt="github") + "\n")


@pytest.fixture(scope="module", autouse=True)
def matrix_table():
    yield
    if ROWS:
        write_table(ROWS)


@pytest.mark.slow
@pytest.mark.parametrize(("pattern", "mode"), CASES)
def test_the_pattern_keeps_its_promise_under_the_fault(pattern, mode, cluster):
    scenario = scenarios.modules()[pattern]
    outcome = scenario.run(**scenario.FAULT_RUN, faults=(mode,))
    d = outcome.delivery
    ROWS.append([pattern, mode.value, "; ".join(outcome.faults) or "(none)", outcome.records_in, outcome.records_out,
                 d.lost, d.duplicated, d.reordered, outcome.verdict, f"{outcome.seconds:.0f}"])
    assert [f for f in outcome.faults if f.startswith(mode.value)], f"no {mode.value} landed: {outcome.notes}"
    assert outcome.failures() == [], (outcome.promise, outcome.failures(), outcome.notes)
    if mode is FailureMode.CLEAN_STOP:
        # On SIGTERM a client job finishes the batch in hand, a Spark job stops its queries
        # between micro-batches, and either exits 0 (jobs.base.stopping_on_sigterm).
        assert all(f.endswith("(exit 0)") for f in outcome.faults), outcome.faults
    print(f"{pattern} under {mode.value}: {outcome.faults[0]}; lost {d.lost}, duplicated {d.duplicated}, "
          f"reordered {d.reordered} (promise {outcome.promise})")

"""The faults tier's matrix: every pattern × each failure mode its catalogue entry says
its promise is tested under (patterns.<pattern>.faults). Each case runs the pattern
with that one fault injected mid-stream (sized by its scenario's FAULT_RUN) and holds
the outcome to the promise of its jobs: nothing lost where the promise says none,
nothing duplicated where it says none, order kept where it promises one, and the
pattern's own checks (a zombie fenced, a crashed batch written again, partitions
moved to survivors, ...). A case whose fault did not land fails too: a run that
injected nothing would pass for nothing."""

import pytest
from tabulate import tabulate

from helpers import ROOT
from kafka_patterns import catalogue, scenarios
from kafka_patterns.services import FailureMode

# What each case measured, written as one table when the module ends (failed cases too).
TABLE = ROOT / ".run" / "logs" / "fault-matrix.md"
HEADERS = ["pattern", "fault", "where it landed", "in", "out", "lost", "duplicated", "reordered", "verdict",
           "seconds"]
ROWS: list[list] = []

CASES = [pytest.param(name, FailureMode(mode), id=f"{name}-{mode}")
         for name, pattern in catalogue.patterns().items() for mode in pattern.faults]


@pytest.fixture(scope="module", autouse=True)
def matrix_table():
    yield
    if ROWS:
        TABLE.parent.mkdir(parents=True, exist_ok=True)
        TABLE.write_text(tabulate(ROWS, headers=HEADERS, tablefmt="github") + "\n")


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
    if mode is FailureMode.CLEAN_STOP and all(j.engine == "client" for j in catalogue.patterns()[pattern].jobs):
        # A client job finishes the batch in hand on SIGTERM and exits 0 (jobs.client).
        assert all(f.endswith("(exit 0)") for f in outcome.faults), outcome.faults
    print(f"{pattern} under {mode.value}: {outcome.faults[0]}; lost {d.lost}, duplicated {d.duplicated}, "
          f"reordered {d.reordered} (promise {outcome.promise})")

"""The bad-input suite: every pattern that reads readings, run end to end with each kind
of bad record mixed into its input (pattern_harness.bad_input), and one table of what
it made of them.

    python -m platform_cli.bad_input_suite                # make bad-input: every such pattern
    python -m platform_cli.bad_input_suite one-to-one     # one of them

Per pattern: the good readings written (the scenario's own verdict against the
promise), the bad records each job dead-lettered with the right reason (and, by the
jobs that store each reading once, another version of a stored reading: `conflicting
duplicate`), and whether the run got through (a crash fails the row). Runs are short and fault-free: the
faults tier covers the kills.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass

from tabulate import tabulate

from pattern_harness import bad_input, scenarios
from pattern_harness.scenarios.base import Outcome
from platform_cli import console, dlq

# Small, fault-free runs: the suite is about bad input, not about kills.
OPTIONS = {"records": 400, "more": 200, "faults": (), "crash_after_commit": 0, "workers": 2}
# A pattern's own minimum: share-queue checks that more consumers than partitions got
# records, which wants a few seconds of readings to share out.
PATTERN_OPTIONS = {"share-queue": {"records": 1_000}}


@dataclass
class Result:
    key: str
    outcome: Outcome | None
    reports: dict[str, bad_input.JobReport]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return (self.error is None and self.outcome is not None and self.outcome.verdict == "PASS"
                and bool(self.reports) and all(r.ok for r in self.reports.values()))

    def rows(self) -> list[list]:
        o = self.outcome
        good = [o.records_in, o.records_out, o.delivery.lost] if o else ["-", "-", "-"]
        crashed = "yes: " + self.error if self.error else "no"
        if not self.reports:
            return [[self.key, *good, "-", "-", "-", "-", crashed, "PASS" if self.ok else "FAIL"]]
        return [[self.key if i == 0 else "", *(good if i == 0 else ["", "", ""]), r.job, r.expected, r.lettered,
                 len(r.wrong_reason) + len(r.wrong_value) + len(r.missing), crashed if i == 0 else "",
                 ("PASS" if self.ok else "FAIL") if i == 0 else ""]
                for i, r in enumerate(self.reports.values())]


HEADERS = ["pattern", "good in", "good out", "lost", "job", "bad in", "dead-lettered", "wrong/missing",
           "crashed", "verdict"]


def patterns() -> list[str]:
    """The patterns with a job that dead-letters what it reads from a readings topic."""
    return [key for key, m in scenarios.modules().items() if bad_input.lettering_readers(m.JOBS)]


def options_of(key: str, run) -> dict:
    """The suite's options that the scenario's run() takes, then the pattern's own."""
    params = inspect.signature(run).parameters
    return {**{k: v for k, v in OPTIONS.items() if k in params}, **PATTERN_OPTIONS.get(key, {})}


def run_pattern(key: str) -> Result:
    """Run the pattern's scenario with bad input injected, then judge its letters."""
    module = scenarios.modules()[key]
    outcome, error = None, None
    with bad_input.injecting() as injected:
        try:
            outcome = module.run(**options_of(key, module.run))
        except Exception as e:  # a crashed job fails the row, the suite goes on
            error = f"{type(e).__name__}: {e}"[:200]
    reports = bad_input.judge(injected, module.JOBS, dlq.read_all()) if injected else {}
    return Result(key, outcome, reports, error)


def table(results: list[Result]) -> str:
    return tabulate([row for r in results for row in r.rows()], headers=HEADERS)


def details(results: list[Result]) -> list[str]:
    out = []
    for r in results:
        for rep in r.reports.values():
            out += [f"{r.key}/{rep.job}: missing {case}" for case in rep.missing]
            out += [f"{r.key}/{rep.job}: wrong reason {w}" for w in rep.wrong_reason]
            out += [f"{r.key}/{rep.job}: value changed: {case}" for case in rep.wrong_value]
        if r.outcome is not None:
            out += [f"{r.key}: {f}" for f in r.outcome.failures()]
    return out


def main(argv: list[str] | None = None) -> int:
    keys = list(sys.argv[1:] if argv is None else argv) or patterns()
    unknown = sorted(set(keys) - set(patterns()))
    if unknown:
        print(f"not a pattern that reads readings: {', '.join(unknown)}; these are: {', '.join(patterns())}",
              file=sys.stderr)
        return 2
    console.quiet("bad-input", verbose=True)  # the steps stay on the terminal, the clients' and Spark's logs go
    results = []
    for key in keys:
        print(f"==> {key}: {len(bad_input.bad_cases())} kinds of bad record and {bad_input.CONFLICT_CASE} "
              "mixed into its input", file=sys.stderr, flush=True)
        results.append(run_pattern(key))
    print(table(results))
    for line in details(results):
        print(f"  {line}")
    print(f"{len(results)} patterns, {sum(r.ok for r in results)} PASS")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

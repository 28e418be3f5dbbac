"""Security tier: every refusal the secure default promises, against the running
cluster. Each test is one named refusal; the run ends with the refusal table (how many
cases, how many were refused), which is what `make test-security` reports."""

from __future__ import annotations

import pytest

REFUSALS: list[tuple[str, str]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        REFUSALS.append((item.nodeid.split("::", 1)[-1], "refused" if report.passed else report.outcome.upper()))


def pytest_terminal_summary(terminalreporter):
    if not REFUSALS:
        return
    write = terminalreporter.write_line
    refused = sum(1 for _, r in REFUSALS if r == "refused")
    write("")
    write(f"refusal table: {refused} of {len(REFUSALS)} cases refused")
    for name, result in REFUSALS:
        write(f"  {result:8} {name}")

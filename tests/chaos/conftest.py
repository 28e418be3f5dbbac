"""Broker fault tier: prints the fault table of this session's runs at the end."""

from __future__ import annotations

from pattern_harness import chaos


def pytest_terminal_summary(terminalreporter):
    results = chaos.THIS_PROCESS
    if results:
        terminalreporter.write_line("")
        terminalreporter.write_line(f"fault table ({len(results)} runs, inventory {results[0].inventory}):")
        for line in chaos.table(results).splitlines():
            terminalreporter.write_line("  " + line)

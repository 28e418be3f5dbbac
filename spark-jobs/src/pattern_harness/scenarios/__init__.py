"""Scenarios: each pattern run end to end on the cluster and measured.

A pattern is a catalogue entry (catalogue.yaml `patterns:` name, order, scenario,
description, jobs). Its scenario module here produces input with a fresh run id, runs
the pattern's jobs (bounded: --available-now, or as client processes), injects the
faults its promise covers, and returns an Outcome with what went in, what came out,
and the lost / duplicated / reordered counts. `make demo`, `make run PATTERN=<name>`
and tests/integration all use the same scenarios.

A scenario module takes its name and jobs from the catalogue
(catalogue.pattern_of_scenario(__name__)) and defines run(**options) -> Outcome.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kafka_patterns.config import catalogue


def modules() -> dict[str, ModuleType]:
    """Scenario modules by pattern name, in demo order (the catalogue's patterns)."""
    return {name: importlib.import_module(f"{__name__}.{p.scenario}") for name, p in catalogue.patterns().items()}

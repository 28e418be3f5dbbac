"""Scenarios: each pattern run end to end on the cluster and measured.

A scenario module (one per pattern) produces input with a fresh run id, runs the
pattern's job(s) from the catalogue (bounded: --available-now, or as client
processes), injects the faults its promise covers, and returns an Outcome with what
went in, what came out, and the lost / duplicated / reordered counts. `make demo`,
`make run PATTERN=<key>` and tests/integration all use the same scenarios.

A module declares KEY (the PATTERN= name), ORDER (its place in the demo), JOBS
(catalogue job names) and run(**options) -> Outcome.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def modules() -> dict[str, ModuleType]:
    """Scenario modules by KEY, in demo order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(module)
    return {m.KEY: m for m in sorted(found, key=lambda m: m.ORDER)}

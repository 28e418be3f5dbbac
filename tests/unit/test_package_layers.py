"""The packages under spark-jobs/src import in one direction only, so that their folders
show the architecture:

    kafka_patterns (shipped in the Spark image)
      config < clients < runtime < jobs, monitoring
    pattern_harness (the tests' harness)   uses kafka_patterns
    platform_cli (behind the make targets) uses both

A layer imports only from itself and the layers below it; the image's package never
imports the harness or the CLIs (the image does not hold them); no two modules import
each other, directly or in a ring. Imports are read from the source (ast), function-level
ones included: a lazy import is an import all the same."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from helpers import ROOT

SRC = ROOT / "spark-jobs" / "src"
# Each layer with the layers it may import (itself always).
MAY_IMPORT = {
    "kafka_patterns.config": set(),
    "kafka_patterns.clients": {"kafka_patterns.config"},
    "kafka_patterns.runtime": {"kafka_patterns.config", "kafka_patterns.clients"},
    "kafka_patterns.jobs": {"kafka_patterns.config", "kafka_patterns.clients", "kafka_patterns.runtime"},
    "kafka_patterns.monitoring": {"kafka_patterns.config", "kafka_patterns.clients", "kafka_patterns.runtime"},
    "pattern_harness": {"kafka_patterns"},
    "platform_cli": {"kafka_patterns", "pattern_harness"},
}
PROJECT = ("kafka_patterns", "pattern_harness", "platform_cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def imports_of(module: str) -> set[str]:
    """The project modules `module` imports (a `from package import name` counts as the
    module package.name when that is a module, else as the package)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                     for a in node.names]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] in PROJECT and n != module}
    return found


def layer_of(module: str) -> str:
    return max((layer for layer in MAY_IMPORT if module == layer or module.startswith(layer + ".")), key=len,
               default=module.split(".")[0])


def within(module: str, layers: set[str]) -> bool:
    return any(module == layer or module.startswith(layer + ".") for layer in layers)


def test_every_module_belongs_to_a_layer() -> None:
    loose = [m for m in MODULES if m not in ("kafka_patterns",) and layer_of(m) not in MAY_IMPORT]
    assert not loose, f"modules outside every layer: {loose}; put each in config, clients, runtime, jobs or " \
                      f"monitoring (or the harness or the CLIs)"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_its_own_layer_and_those_below(module: str) -> None:
    layer = layer_of(module)
    allowed = MAY_IMPORT.get(layer, set()) | {layer}
    wrong = sorted(i for i in imports_of(module) if not within(i, allowed) and i != "kafka_patterns")
    assert not wrong, f"{module} (layer {layer}) imports {wrong}"


def test_the_shipped_package_never_imports_the_harness_or_the_clis() -> None:
    shipped = [m for m in MODULES if m.startswith("kafka_patterns")]
    leaks = {m: sorted(i for i in imports_of(m) if not i.startswith("kafka_patterns")) for m in shipped}
    assert not {m: i for m, i in leaks.items() if i}, leaks


def test_no_modules_import_each_other_directly_or_in_a_ring() -> None:
    graph = {m: {i for i in imports_of(m) if i in MODULES} for m in MODULES}
    state: dict[str, str] = {}
    rings = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = "open"
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                rings.append([*path[path.index(n):], n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    # A package's __init__ imported by its own modules is not a ring of code.
    rings = [r for r in rings
             if not any(a.startswith(b + ".") or b.startswith(a + ".") for a, b in itertools.pairwise(r))]
    assert not rings, f"import rings: {rings}"


def test_the_layers_are_the_folders() -> None:
    """The check above reads its layers from MAY_IMPORT: every package folder is one."""
    folders = {module_name(p.parent) for p in SRC.rglob("__init__.py")}
    assert {f for f in folders if f.count(".") <= 1 and f != "kafka_patterns"} \
        - {"pattern_harness.scenarios"} == set(MAY_IMPORT) - {"kafka_patterns"}

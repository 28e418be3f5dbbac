"""How the chart's values are layered: the one rule that make render, the Pulumi program
and the tests follow, so that what they render, deploy and check is the same.

Helm reads the chart's values.yaml, then each -f file in order, a later one winning:
the pins (versions.yml), the catalogue, a variant's values file (values-<name>.yaml),
then a stack's overrides. Mappings merge key by key; anything else (lists included) is
replaced whole, as Helm coalesces values."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from kafka_patterns.config.catalogue import CATALOGUE_FILE, ROOT, VERSIONS_FILE

CHART_DIR = ROOT / "helm" / "kafka-patterns"
CHART_DEFAULTS = CHART_DIR / "values.yaml"


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of two layers: mappings key by key, the rest replaced (copies, never
    the layers themselves)."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def merge_all(layers: Iterable[dict[str, Any]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for layer in layers:
        values = merge(values, layer)
    return values


def read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (the chart's values are layered from it)")
    return yaml.safe_load(path.read_text()) or {}


def variants() -> dict[str, Path]:
    """Every variant of the chart by name: "default" (values.yaml alone), then one per
    values-<name>.yaml (dev, prod, local, ...)."""
    return {"default": CHART_DEFAULTS,
            **{p.stem.removeprefix("values-"): p for p in sorted(CHART_DIR.glob("values-*.yaml"))}}


def value_files(variant_file: Path) -> list[Path]:
    """The -f files of a variant in Helm's order (values.yaml is read first anyway)."""
    return [VERSIONS_FILE, CATALOGUE_FILE, variant_file]


def layered(variant_file: Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The values handed to Helm for a variant (its -f files, then the overrides)."""
    return merge_all([*(read(f) for f in value_files(variant_file)), overrides or {}])


def effective(variant_file: Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The values the chart's templates see: values.yaml under the layered values."""
    return merge(read(CHART_DEFAULTS), layered(variant_file, overrides))

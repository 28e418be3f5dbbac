"""Fixtures of the iac tier: the chart rendered once per values file with the pinned
helm, the pinned CRD directory, the pins. No cluster and no network are needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from manifests import CRD_DIR, NAMESPACE, VERSIONS_FILE, render_tool


@pytest.fixture(scope="session")
def versions() -> dict[str, Any]:
    return yaml.safe_load(VERSIONS_FILE.read_text())


@pytest.fixture(scope="session")
def helm() -> Path:
    binary = render_tool.helm_binary()
    if binary is None:
        pytest.fail("helm not found: run `make setup` (the helm_tool role builds the pinned helm into .cache/bin)")
    return binary


@pytest.fixture(scope="session")
def rendered(helm: Path) -> dict[str, list[dict[str, Any]]]:
    """Every object of every variant, rendered once per session."""
    return {name: render_tool.render(path, NAMESPACE, helm) for name, path in render_tool.values_files().items()}


@pytest.fixture(scope="session")
def crd_dir() -> Path:
    if not CRD_DIR.is_dir() or not any(CRD_DIR.glob("*/*.yaml")):
        pytest.fail(f"the pinned CRDs are missing: expected {CRD_DIR} (../shared/crds beside the checkout, "
                    "with strimzi-<version>/ and spark-operator-<version>/)")
    return CRD_DIR

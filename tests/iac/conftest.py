"""Fixtures of the iac tier: the chart rendered once per values file with the pinned
helm, the pinned CRDs and their validators, the pins. No cluster and no network are
needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from manifests import CRD_DIR, NAMESPACE, REPO_CRD_DIR, render_tool, strict

from kafka_patterns.config.catalogue import VERSIONS_FILE


@pytest.fixture(scope="session")
def versions() -> dict[str, Any]:
    return yaml.safe_load(VERSIONS_FILE.read_text())


@pytest.fixture(scope="session")
def helm() -> Path:
    binary = render_tool.helm_binary()
    if binary is None:
        pytest.fail("helm not found: run `make helm` (the helm_tool role builds the pinned helm into .cache/bin)")
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


@pytest.fixture(scope="session")
def crd_validators(crd_dir: Path) -> dict[tuple[str, str], jsonschema.protocols.Validator]:
    """(apiVersion, kind) -> validator, for every served version of every pinned CRD:
    ../shared/crds and the checkout's own (helm/tools/crds)."""
    out = {}
    for path in sorted(crd_dir.glob("*/*.yaml")) + sorted(REPO_CRD_DIR.glob("*/*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if not crd or crd.get("kind") != "CustomResourceDefinition":
            continue
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                schema = strict(version["schema"]["openAPIV3Schema"])
                out[(f"{group}/{version['name']}", kind)] = jsonschema.Draft4Validator(schema)
    assert out, f"no CustomResourceDefinition found under {crd_dir}"
    return out

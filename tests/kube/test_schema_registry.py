"""The chart's schema registry on the local Kubernetes, as `make deploy STACK=local`
runs it (the image `make image` builds from the distribution the hosts run; its
certificate and users' digests made by the deploy): from a pod of the project image,
through its Service and the project CA, the catalogue's schemas register as
registry-admin and read back as registry-reader, and the secure default refuses the
reader's writes, anonymous and wrong-password calls, plain HTTP and a breaking version
(the registry's own BACKWARD rule)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from probe_pod import run_probe

from helpers import ROOT
from kafka_patterns.config import schemas

NAMESPACE = "kafka-patterns"
PASSWORDS = ROOT / ".run" / "kafka-access"
CATALOGUE = yaml.safe_load((ROOT / "catalogue" / "catalogue.yaml").read_text())
SERVICE = f"{CATALOGUE['cluster']['name']}-schema-registry"
PORT = 8443


@pytest.fixture(scope="module")
def registry_ready(kubectl) -> str:
    """The registry's Deployment rolled out; its Service's in-cluster URL."""
    kubectl("rollout", "status", f"deployment/{SERVICE}", "-n", NAMESPACE, "--timeout=300s", timeout=330,
            check=True)
    return f"https://{SERVICE}.{NAMESPACE}.svc:{PORT}"


@pytest.fixture(scope="module")
def probe(kubectl, registry_ready) -> dict:
    """Run registry_probe.py once in a pod of the project image; its JSON answer."""
    name = f"registry-probe-{uuid.uuid4().hex[:6]}"
    kubectl("create", "secret", "generic", name, "-n", NAMESPACE,
            f"--from-file=admin.password={PASSWORDS / 'registry-admin.password'}",
            f"--from-file=reader.password={PASSWORDS / 'registry-reader.password'}", check=True)
    try:
        return run_probe(kubectl, NAMESPACE, name, Path(__file__).parent / "registry_probe.py",
                         {"SCHEMA_REGISTRY_URL": registry_ready, "SCHEMA_REGISTRY_CA_FILE": "/ca/ca.crt",
                          "PROBE_DIR": "/probe", "PROBE_GROUP": f"kube-probes-{uuid.uuid4().hex[:8]}"},
                         {"/probe": name, "/ca": f"{CATALOGUE['cluster']['name']}-cluster-ca-cert"})
    finally:
        kubectl("delete", "secret", name, "-n", NAMESPACE)


def test_a_pod_registers_the_catalogues_schemas_and_reads_them_back(probe):
    declared = {f"{name} v{v}" for name, s in schemas.declared().items() for v in range(1, len(s.versions) + 1)}
    synced = {line.split(":")[0] for line in probe["synced"]}
    assert synced == declared, probe["synced"]
    assert probe["reader_reads"] == 200
    assert probe["reading_v1_id"] > 0


def test_the_reader_cannot_write(probe):
    assert probe["reader_writes"].startswith("refused") and "403" in probe["reader_writes"], probe["reader_writes"]


def test_anonymous_and_wrong_password_calls_are_refused(probe):
    assert probe["anonymous"] == 401
    assert "401" in probe["wrong_password"], probe["wrong_password"]


def test_plain_http_gets_no_answer(probe):
    assert not isinstance(probe["plain_http"], int) or probe["plain_http"] >= 400, probe["plain_http"]


def test_a_breaking_version_is_refused_by_the_registry(probe):
    assert probe["compatible_first_version"] == "accepted"
    assert probe["breaking_version"].startswith("refused 4"), probe["breaking_version"]

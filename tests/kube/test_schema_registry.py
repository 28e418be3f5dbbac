"""The chart's schema registry on the local Kubernetes, as `make deploy STACK=local`
runs it (the image `make image` builds from the distribution the hosts run; its
certificate and users' digests made by the deploy): from a pod of the project image,
through its Service and the project CA, the catalogue's schemas register as
registry-admin and read back as registry-reader, and the secure default refuses the
reader's writes, anonymous and wrong-password calls, plain HTTP and a breaking version
(the registry's own BACKWARD rule)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml

from helpers import ROOT
from kafka_patterns import schemas

NAMESPACE = "kafka-patterns"
VERSIONS = yaml.safe_load((ROOT / "ansible" / "versions.yml").read_text())
IMAGE = f"docker.io/library/kafka-patterns-spark:{VERSIONS['spark_version']}"
PASSWORDS = ROOT / ".run" / "kafka-access"
CATALOGUE = yaml.safe_load((ROOT / "spark-jobs" / "catalogue.yaml").read_text())
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
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "restartPolicy": "Never", "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 185},
            "containers": [{
                "name": "probe", "image": IMAGE, "imagePullPolicy": "Never",
                "command": ["python3", "-c", (Path(__file__).parent / "registry_probe.py").read_text()],
                "env": [{"name": "SCHEMA_REGISTRY_URL", "value": registry_ready},
                        {"name": "SCHEMA_REGISTRY_CA_FILE", "value": "/ca/ca.crt"},
                        {"name": "PROBE_DIR", "value": "/probe"},
                        {"name": "PROBE_GROUP", "value": f"kube-probes-{uuid.uuid4().hex[:8]}"}],
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "probe", "mountPath": "/probe", "readOnly": True},
                                 {"name": "ca", "mountPath": "/ca", "readOnly": True}]}],
            "volumes": [{"name": "probe", "secret": {"secretName": name}},
                        {"name": "ca", "secret": {"secretName": f"{CATALOGUE['cluster']['name']}-cluster-ca-cert"}}],
        },
    }
    try:
        kubectl("apply", "-f", "-", input=json.dumps(pod), check=True)
        done = kubectl("wait", "-n", NAMESPACE, f"pod/{name}", "--for=jsonpath={.status.phase}=Succeeded",
                       "--timeout=240s", timeout=270)
        logs = kubectl("logs", "-n", NAMESPACE, f"pod/{name}").stdout
        if done.returncode != 0:
            pytest.fail(f"the probe pod did not succeed:\n{logs[-3000:]}\n"
                        f"{kubectl('describe', '-n', NAMESPACE, f'pod/{name}').stdout[-2000:]}")
        answer = json.loads(logs.strip().splitlines()[-1])
        print(f"\nregistry probe: {json.dumps(answer, indent=1)}")
        return answer
    finally:
        kubectl("delete", "pod", name, "-n", NAMESPACE, "--wait=false")
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

"""Every object of every values file, applied server-side (dry run) to the local
cluster's real API server with the pinned CRDs installed: the API server's own
validation (OpenAPI types, strict unknown-field checks, CEL rules, served versions,
core object rules) accepts them all. Broken objects prove the check can fail.
The offline schema checks (tests/iac) run beside these."""

from __future__ import annotations

import copy
import json
import uuid

import pytest
import yaml

from helpers import ROOT

CRD_DIR = ROOT.parent / "shared" / "crds"
RENDER_DIR = ROOT / "build" / "kube-ssa"


def render_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("kp_render", ROOT / "helm" / "tools" / "render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RENDER = render_tool()
VARIANTS = list(RENDER.values_files())


@pytest.fixture(scope="module")
def crds(kubectl):
    """The pinned Strimzi and spark-operator CRDs, installed and Established."""
    if not CRD_DIR.is_dir():
        pytest.fail(f"the pinned CRDs are missing: expected {CRD_DIR} (../shared/crds beside the checkout)")
    files = sorted(CRD_DIR.glob("*/*.yaml"))
    for f in files:
        proc = kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=kafka-patterns", "-f", str(f))
        assert proc.returncode == 0, f"{f.name}: {proc.stderr}"
    names = [yaml.safe_load(f.read_text())["metadata"]["name"] for f in files]
    proc = kubectl("wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in names],
                   retry_until_ok=60)
    assert proc.returncode == 0, proc.stderr
    return names


@pytest.fixture(scope="module")
def namespace(kubectl, crds):
    name = f"kp-ssa-{uuid.uuid4().hex[:6]}"
    assert kubectl("create", "namespace", name).returncode == 0
    yield name
    kubectl("delete", "namespace", name, "--wait=false")


def dry_run_apply(kubectl, namespace: str, objects: list[dict]):
    path = RENDER_DIR / f"{uuid.uuid4().hex[:8]}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    try:
        return kubectl("apply", "--server-side", "--dry-run=server", "--validate=strict",
                       "--field-manager=kafka-patterns-check", "-n", namespace, "-f", str(path))
    finally:
        path.unlink()


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_api_server_accepts_every_object_of_the_values_file(kubectl, namespace, variant):
    objects = RENDER.render(RENDER.values_files()[variant], namespace)
    assert objects, variant
    proc = dry_run_apply(kubectl, namespace, objects)
    accepted = [line for line in proc.stdout.splitlines() if "(server dry run)" in line]
    assert proc.returncode == 0, proc.stderr
    assert len(accepted) == len(objects), (len(accepted), len(objects), proc.stdout)


def first(objects: list[dict], kind: str) -> dict:
    return copy.deepcopy(next(o for o in objects if o["kind"] == kind))


@pytest.fixture(scope="module")
def dev_objects(namespace):
    return RENDER.render(RENDER.values_files()["dev"], namespace)


@pytest.mark.parametrize("breakage", ["wrong type", "unknown field", "unserved version", "invalid core object"])
def test_the_api_server_rejects_a_broken_object(kubectl, namespace, dev_objects, breakage):
    if breakage == "wrong type":
        obj = first(dev_objects, "KafkaTopic")
        obj["spec"]["partitions"] = "three"
    elif breakage == "unknown field":
        obj = first(dev_objects, "SparkApplication")
        obj["spec"]["driver"]["coresPerSecond"] = 1
    elif breakage == "unserved version":
        obj = first(dev_objects, "Kafka")
        obj["apiVersion"] = "kafka.strimzi.io/v1beta1"
    else:
        obj = first(dev_objects, "ServiceAccount")
        obj["metadata"]["name"] = "Not_A_DNS_Name"
    proc = dry_run_apply(kubectl, namespace, [obj])
    assert proc.returncode != 0, f"{breakage} accepted: {json.dumps(obj)[:300]}"

"""Every rendered object is valid: built-in kinds against the Kubernetes schemas of the
pinned kubernetes_version (kubernetes-validate, offline), custom resources against the
openAPIV3Schema of the pinned Strimzi, spark-operator and Prometheus Operator CRDs
(jsonschema; the crd_validators fixture)."""

from __future__ import annotations

import kubernetes_validate
import pytest
from manifests import REPO_CRD_DIR, STRIMZI_VARIANTS, VARIANTS


def custom_groups(crd_validators) -> set[str]:
    return {api.split("/")[0] for api, _ in crd_validators}


def test_the_pins_match_the_pinned_crds(crd_dir, versions):
    assert (crd_dir / f"strimzi-{versions['strimzi_version']}").is_dir()
    assert (crd_dir / f"spark-operator-{versions['spark_operator_version']}").is_dir()
    # The checkout's own: the pinned version, and no other.
    pinned = f"prometheus-operator-{versions['prometheus_operator_version']}"
    assert [p.name for p in REPO_CRD_DIR.glob("*/")] == [pinned]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_custom_resource_matches_its_pinned_crd(rendered, crd_validators, variant):
    groups = custom_groups(crd_validators)
    errors = []
    checked = 0
    for obj in rendered[variant]:
        if obj["apiVersion"].split("/")[0] not in groups:
            continue
        validator = crd_validators.get((obj["apiVersion"], obj["kind"]))
        if validator is None:
            errors.append(f"{obj['kind']} {obj['metadata']['name']}: {obj['apiVersion']} is not served by the CRDs")
            continue
        checked += 1
        for e in validator.iter_errors(obj):
            where = "/".join(str(p) for p in e.absolute_path)
            errors.append(f"{obj['kind']} {obj['metadata']['name']}: {where}: {e.message}")
    assert not errors, "\n".join(errors)
    assert checked > 0


def schema_version(kubernetes_version: str) -> str:
    """kubernetes-validate ships one schema set per minor release (v1.33.0 for every
    1.33.x): the pinned patch release is validated against its minor's schemas."""
    major, minor = kubernetes_version.split(".")[:2]
    return f"{major}.{minor}"


def test_kubernetes_validate_has_the_schemas_of_the_pinned_minor(versions):
    obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "probe"}}
    used = kubernetes_validate.validate(obj, versions["kubernetes_version"], strict=True)
    # Not an older minor's schemas by fallback.
    assert used == schema_version(versions["kubernetes_version"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_builtin_object_matches_the_kubernetes_schema(rendered, crd_validators, versions, variant):
    groups = custom_groups(crd_validators)
    errors = []
    builtins = [o for o in rendered[variant] if o["apiVersion"].split("/")[0] not in groups]
    for obj in builtins:
        try:
            kubernetes_validate.validate(obj, schema_version(versions["kubernetes_version"]), strict=True)
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(e.message)
        except kubernetes_validate.ValidationError as e:
            where = "/".join(str(p) for p in e.absolute_path)
            errors.append(f"{obj['kind']} {obj['metadata']['name']}: {where}: {e.message}")
    assert not errors, "\n".join(errors)
    assert builtins, "the chart renders the Spark drivers' ServiceAccount and RBAC"


def test_the_strict_crd_check_catches_an_unknown_field(rendered, crd_validators):
    # spec.kafka.replicas was removed with node pools: the API server rejects it.
    kafka = next(o for o in rendered["default"] if o["kind"] == "Kafka")
    bad = {**kafka, "spec": {**kafka["spec"], "kafka": {**kafka["spec"]["kafka"], "replicas": 3}}}
    assert not list(crd_validators[("kafka.strimzi.io/v1", "Kafka")].iter_errors(kafka))
    assert list(crd_validators[("kafka.strimzi.io/v1", "Kafka")].iter_errors(bad))


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_only_kafka_strimzi_io_v1_is_used(rendered, variant):
    strimzi = {o["apiVersion"] for o in rendered[variant] if o["apiVersion"].startswith("kafka.strimzi.io/")}
    assert strimzi == {"kafka.strimzi.io/v1"}

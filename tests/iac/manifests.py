"""Paths and helpers of the iac tier (fixtures live in conftest.py)."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml

from helpers import ROOT, load_module
from kafka_patterns.config import acls, chart_values
from kafka_patterns.config.names import k8s_name

CHART_DIR = chart_values.CHART_DIR
# The pinned CRDs live beside the checkout (../shared/crds), not inside it; those of the
# Prometheus Operator (PodMonitor), which the chart uses only where a cluster has them,
# inside it (helm/tools/crds/prometheus-operator-<prometheus_operator_version>/).
CRD_DIR = ROOT.parent / "shared" / "crds"
REPO_CRD_DIR = ROOT / "helm" / "tools" / "crds"
# A namespace no template could have typed: every namespace in the output must come
# from the release.
NAMESPACE = "kp-iac-ns"


render_tool = load_module("kp_render", ROOT / "helm" / "tools" / "render.py")
# Every variant of the chart: "default" (values.yaml alone), "dev", "local", "prod".
VARIANTS = list(render_tool.values_files())


def values_of(variant: str) -> dict[str, Any]:
    """The chart's values for a variant as its templates see them (the pins and the
    catalogue under the variant's file, all under values.yaml)."""
    return chart_values.effective(chart_values.variants()[variant])


# Variants on a Strimzi cluster (Kafka, node pools, topics, users, Connect rendered) and
# variants that bring their own Kafka (kafka.external.enabled: Spark applications only).
BYO_VARIANTS = [v for v in VARIANTS if values_of(v)["kafka"]["external"]["enabled"]]
STRIMZI_VARIANTS = [v for v in VARIANTS if v not in BYO_VARIANTS]
# What a variant runs besides Kafka (a release may run Kafka alone).
SPARK_VARIANTS = [v for v in VARIANTS if values_of(v)["spark"]["enabled"]]
CLIENT_VARIANTS = [v for v in VARIANTS if values_of(v)["clients"]["enabled"]]
CONNECT_VARIANTS = [v for v in STRIMZI_VARIANTS if values_of(v)["connect"]["enabled"]]
KAFKA_EXPORTER_VARIANTS = [v for v in STRIMZI_VARIANTS if values_of(v)["monitoring"]["kafkaExporter"]["enabled"]]
# KRaft controllers and brokers in pools of their own, or one pool of nodes with both roles.
SEPARATE_POOL_VARIANTS = [v for v in STRIMZI_VARIANTS if values_of(v)["kafka"]["nodePools"] == "separate"]
COMBINED_POOL_VARIANTS = [v for v in STRIMZI_VARIANTS if v not in SEPARATE_POOL_VARIANTS]


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD schema as the API server applies it with strict field validation: unknown
    fields are errors (not silently pruned) unless x-kubernetes-preserve-unknown-fields,
    and `nullable` admits null. Branches of anyOf/oneOf stay as they are."""
    out = dict(schema)
    if out.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if "properties" in out:
        out["properties"] = {k: strict(v) for k, v in out["properties"].items()}
        if "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = strict(out["additionalProperties"])
    if isinstance(out.get("items"), dict):
        out["items"] = strict(out["items"])
    return out


def kinds(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = kinds(objects, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def connect_name(objects: list[dict[str, Any]]) -> str | None:
    """The KafkaConnect's name, None where the variant runs no Connect."""
    found = kinds(objects, "KafkaConnect")
    assert len(found) <= 1, f"expected at most one KafkaConnect, found {len(found)}"
    return found[0]["metadata"]["name"] if found else None


def by_name(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in kinds(objects, kind)}


# The catalogue's ACL rule, written once (the Ansible module links to it); the chart's
# KafkaUser template is the implementation the tests hold it to.
catalogue_acls = acls.job_acls


def user_acls(user: dict[str, Any]) -> set[acls.Acl]:
    """A KafkaUser's ACLs as (resource type, name, pattern type, operation) tuples."""
    return acls.listed_acls(user["spec"]["authorization"]["acls"])


def resources_of(objects: list[dict[str, Any]], kind: str, entries: list[dict[str, Any]]):
    """(catalogue entry, its resource of kind) for every entry; fails naming the
    entries that have none."""
    found = by_name(objects, kind)
    missing = [e["name"] for e in entries if k8s_name(e["name"]) not in found]
    assert not missing, f"no {kind} for {missing}"
    return [(e, found[k8s_name(e["name"])]) for e in entries]


def template(helm, *sets: str, variant: str = "default",
             api_versions: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """helm template of a variant with --set overrides (not checked: for error cases),
    as on a cluster that also serves `api_versions` (group/version/kind)."""
    args = [a for s in sets for a in ("--set", s)] + [a for v in api_versions for a in ("--api-versions", v)]
    return subprocess.run([str(helm), "template", "patterns", str(CHART_DIR), "--namespace", NAMESPACE,
                           *render_tool.helm_args(render_tool.values_files()[variant]), *args],
                          capture_output=True, text=True, check=False)


def objects_of(helm, *sets: str, variant: str = "default", api_versions: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The objects of a variant rendered with --set overrides."""
    proc = template(helm, *sets, variant=variant, api_versions=api_versions)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def app_specs(objects) -> dict[str, dict[str, Any]]:
    """Job name -> SparkApplication spec (a scheduled one's template)."""
    out = {}
    for app in kinds(objects, "SparkApplication"):
        out[app["metadata"]["labels"]["kafka-patterns/job"]] = app["spec"]
    for app in kinds(objects, "ScheduledSparkApplication"):
        out[app["metadata"]["labels"]["kafka-patterns/job"]] = app["spec"]["template"]
    return out


def env(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A pod's (or Spark role's, or container's) env entries by name."""
    return {e["name"]: e for e in pod["env"]}

"""helm/tools/kube_stack.py: which stack `make deploy`, `make destroy`, `make k8s-status`
and the live checks mean when STACK is not given, and that stack's namespaces and
values, from kubeconfig files only (no cluster)."""

from __future__ import annotations

import pytest
import yaml
from manifests import ROOT, load_module

kube_stack = load_module("kp_kube_stack_test", ROOT / "helm" / "tools" / "kube_stack.py")
LOCAL_SERVER = "https://198.51.100.1:6443"


def kubeconfig(path, server: str | None, context: bool = True):
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": "c", "cluster": {"server": server}}] if server else [],
           "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}] if server else [],
           "users": [{"name": "u", "user": {}}]}
    if context and server:
        doc["current-context"] = "x"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def local_cluster(tmp_path, monkeypatch):
    """A local cluster's admin kubeconfig, as `make kube-up` writes it."""
    path = kubeconfig(tmp_path / "admin.kubeconfig", LOCAL_SERVER)
    monkeypatch.setattr(kube_stack, "LOCAL_KUBECONFIG", path)
    return path


def test_without_a_local_cluster_the_stack_is_dev(tmp_path, monkeypatch):
    monkeypatch.setattr(kube_stack, "LOCAL_KUBECONFIG", tmp_path / "absent")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "k", "https://prod.example.com")))
    assert kube_stack.current_stack() == "dev"


def test_the_local_clusters_context_means_the_local_stack(tmp_path, monkeypatch, local_cluster):
    mine = kubeconfig(tmp_path / "mine", LOCAL_SERVER)
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{mine}")
    assert kube_stack.current_stack() == "local"


def test_another_clusters_context_means_dev(tmp_path, monkeypatch, local_cluster):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "k", "https://prod.example.com")))
    assert kube_stack.current_stack() == "dev"


def test_no_context_at_all_and_a_local_cluster_means_local(tmp_path, monkeypatch, local_cluster):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "k", "https://other:6443", context=False)))
    assert kube_stack.current_stack() == "local"


def test_the_local_stack_uses_its_own_kubeconfig_whatever_kubeconfig_says(monkeypatch, local_cluster):
    monkeypatch.setenv("KUBECONFIG", "/somewhere/else")
    assert kube_stack.kubeconfig("local") == str(local_cluster)
    assert kube_stack.kubeconfig("dev") == "/somewhere/else"


def test_namespaces_and_values_of_each_stack():
    local = yaml.safe_load((ROOT / "pulumi" / "Pulumi.local.yaml").read_text())["config"]
    assert kube_stack.namespace("local") == local["kafka-patterns:namespace"] == "kafka-patterns"
    assert kube_stack.operator_namespace("local") == local["kafka-patterns:operatorNamespace"]
    dev = yaml.safe_load((ROOT / "pulumi" / "Pulumi.dev.yaml").read_text())["config"]
    assert kube_stack.namespace("dev") == dev["kafka-patterns:namespace"]
    assert kube_stack.values_file("local").name == "values-local.yaml"
    assert kube_stack.kafka_external("local") and not kube_stack.kafka_external("dev")
    # make k8s-status shows the Strimzi Kafka where it runs: the local stack's second release.
    assert kube_stack.strimzi_namespace("local") == local["kafka-patterns:strimziRelease"]["namespace"]
    assert kube_stack.strimzi_namespace("dev") == kube_stack.namespace("dev")


def test_an_unknown_stack_is_named_with_the_known_ones():
    with pytest.raises(SystemExit, match="unknown STACK 'staging': expected one of dev, local, prod"):
        kube_stack.namespace("staging")


def test_k8s_status_lists_the_client_jobs():
    sections = dict(kube_stack.STATUS_SPARK)
    args = sections["client jobs"]
    assert set(args[0].split(",")) == {"deployments", "cronjobs", "jobs"}
    assert args[args.index("-l") + 1] == "kafka-patterns/job"

"""Live checks of a deployed Kubernetes path (`make deploy` runs them after the
rollout). Every test here skips, with the reason printed (-rs), when there is no
kubectl, no kube context, no reachable API server or nothing deployed.

KP_LIVE_NAMESPACE / KP_LIVE_CLUSTER / KP_LIVE_CONNECT name what to check (the
deploy playbook sets them from the Pulumi stack outputs); without them the namespace
comes from pulumi/Pulumi.<KP_LIVE_STACK or dev>.yaml and the names from the catalogue.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml
from live_cluster import Live

from helpers import ROOT


def _kubectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["kubectl", *args], capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture(scope="session")
def live(cat) -> Live:
    if shutil.which("kubectl") is None:
        pytest.skip("live checks skipped: kubectl is not installed")
    context = _kubectl("config", "current-context")
    if context.returncode != 0 or not context.stdout.strip():
        pytest.skip("live checks skipped: no kube context is configured (set KUBECONFIG or "
                    "`kubectl config use-context <name>`)")
    if _kubectl("version", "--request-timeout=10s").returncode != 0:
        pytest.skip(f"live checks skipped: the API server of context {context.stdout.strip()} does not answer")
    stack = os.environ.get("KP_LIVE_STACK", "dev")
    namespace = os.environ.get("KP_LIVE_NAMESPACE") or yaml.safe_load(
        (ROOT / "pulumi" / f"Pulumi.{stack}.yaml").read_text())["config"]["kafka-patterns:namespace"]
    cluster = os.environ.get("KP_LIVE_CLUSTER") or cat["cluster"]["name"]
    found = _kubectl("get", "kafka", cluster, "-n", namespace)
    if found.returncode != 0:
        pytest.skip(f"live checks skipped: no Kafka {cluster} in namespace {namespace} (run `make deploy`): "
                    + found.stderr.strip())
    return Live(namespace, cluster, os.environ.get("KP_LIVE_CONNECT") or f"{cluster}-connect")

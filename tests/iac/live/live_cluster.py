"""Access to the deployed platform for the live checks (fixtures in conftest.py)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Live:
    stack: str
    namespace: str
    operator_namespace: str
    cluster: str
    connect: str
    # Bring-your-own Kafka: no Strimzi Kafka, topics, users or Connect in the cluster.
    kafka_external: bool
    # Streaming / scheduled catalogue jobs the stack's values deploy.
    streaming_jobs: list[str] = field(default_factory=list)
    scheduled_jobs: list[str] = field(default_factory=list)
    # Client (engine: client) catalogue jobs the stack's values deploy.
    client_jobs: list[str] = field(default_factory=list)
    kubectl: str = "kubectl"
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.kubectl, *args], capture_output=True, text=True, timeout=timeout,
                              env=self.env, check=False)

    def testinfra_url(self, pod: str, container: str) -> str:
        """A testinfra kubectl:// URL for a pod of the platform, with this stack's
        kubeconfig (testinfra's backend runs `kubectl` with only what the URL says)."""
        url = f"kubectl://{pod}?container={container}&namespace={self.namespace}"
        return f"{url}&kubeconfig={self.env['KUBECONFIG']}" if self.env.get("KUBECONFIG") else url

    def get(self, *args: str, namespace: str | None = None) -> dict[str, Any]:
        """kubectl get ... -o json in the platform namespace (or the one given)."""
        proc = self.run("get", *args, "-n", namespace or self.namespace, "-o", "json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def items(self, *args: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.get(*args, namespace=namespace)["items"]


def condition(obj: dict[str, Any], kind: str = "Ready") -> str | None:
    return next((c["status"] for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), None)

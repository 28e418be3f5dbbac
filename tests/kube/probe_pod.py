"""A probe script run once in a pod of the project image (its Python, confluent-kafka
and the job package), as an unprivileged user with Secrets mounted read-only: what a
job on the cluster sees. The script prints one JSON object as its last line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from helpers import ROOT

VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())
IMAGE = f"docker.io/library/kafka-patterns-spark:{VERSIONS['spark_version']}"


def run_probe(kubectl, namespace: str, name: str, script: Path, env: dict[str, str],
              secrets: dict[str, str], timeout: int = 240) -> dict:
    """Run `script` with `env` and each Secret of `secrets` ({mount path: Secret name});
    its JSON answer. Fails with the pod's log and description when it does not succeed."""
    volumes = {f"s{i}": (path, secret) for i, (path, secret) in enumerate(secrets.items())}
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "restartPolicy": "Never", "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 185},
            "containers": [{
                "name": "probe", "image": IMAGE, "imagePullPolicy": "Never",
                "command": ["python3", "-c", script.read_text()],
                "env": [{"name": k, "value": v} for k, v in env.items()],
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": v, "mountPath": path, "readOnly": True}
                                 for v, (path, _) in volumes.items()]}],
            "volumes": [{"name": v, "secret": {"secretName": secret}} for v, (_, secret) in volumes.items()],
        },
    }
    try:
        kubectl("apply", "-f", "-", input=json.dumps(pod), check=True)
        done = kubectl("wait", "-n", namespace, f"pod/{name}", "--for=jsonpath={.status.phase}=Succeeded",
                       f"--timeout={timeout}s", timeout=timeout + 30)
        logs = kubectl("logs", "-n", namespace, f"pod/{name}").stdout
        if done.returncode != 0:
            pytest.fail(f"the probe pod did not succeed:\n{logs[-3000:]}\n"
                        f"{kubectl('describe', '-n', namespace, f'pod/{name}').stdout[-2000:]}")
        answer = json.loads(logs.strip().splitlines()[-1])
        print(f"\n{script.stem}: {json.dumps(answer, indent=1)}")
        return answer
    finally:
        kubectl("delete", "pod", name, "-n", namespace, "--wait=false")

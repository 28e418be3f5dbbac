"""The local Kubernetes node itself (`make kube-up`): the pinned version, Ready, its
system pods, pods that run, cluster DNS, pod networking (to another pod, to a Service,
to this machine), every socket of the cluster on 127.0.0.1 or the bridge, and a second
kube-up that changes nothing.

Pods use the toolbox image kube-up imports (Debian's static busybox on scratch)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
import yaml

from helpers import ROOT, run_playbook

Kubectl = Callable[..., subprocess.CompletedProcess]
KUBE_DIR = ROOT / ".run" / "kube"
VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())

NODE = "kp-node"
NODE_ADDRESS = "198.51.100.1"
ALLOWED_LISTEN = {"127.0.0.1", NODE_ADDRESS}
TOOLBOX = "docker.io/library/kafka-patterns-busybox:local"
PINNED = f"v{VERSIONS['kubernetes_version']}"


@pytest.fixture(scope="module")
def namespace(kubectl: Kubectl):
    name = f"kp-node-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", name, check=True)
    # The namespace's default service account appears asynchronously; pods need it.
    kubectl("get", "serviceaccount", "default", "-n", name, retry_until_ok=60, check=True)
    yield name
    kubectl("delete", "namespace", name, "--wait=false")


def pod(name: str, command: list[str], restart: str = "Never", labels: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": name}},
        "spec": {
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": 1,
            "containers": [{
                "name": "main",
                "image": TOOLBOX,
                "imagePullPolicy": "Never",
                "command": command,
                "resources": {"requests": {"cpu": "10m", "memory": "8Mi"}, "limits": {"memory": "32Mi"}},
            }],
        },
    }


def apply(kubectl: Kubectl, namespace: str, *objects: dict) -> None:
    doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})
    kubectl("apply", "-n", namespace, "-f", "-", input=doc, check=True)


def finished_logs(kubectl: Kubectl, namespace: str, name: str, timeout: float = 30) -> str:
    """A finished pod's logs. Right after the phase turns Succeeded, `kubectl logs` can
    come back empty or fail while the kubelet still holds the container's log (seen once
    in CI on a busy node): asked again until it answers with output, within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        done = kubectl("logs", "-n", namespace, f"pod/{name}")
        if (done.returncode == 0 and done.stdout.strip()) or time.monotonic() > deadline:
            return done.stdout if done.returncode == 0 else f"{done.stdout}\n(kubectl logs: {done.stderr.strip()})"
        time.sleep(1)


def run_to_completion(kubectl: Kubectl, namespace: str, name: str, command: list[str],
                      timeout: int = 120) -> tuple[str, str]:
    """Run a pod until it ends; returns (phase, logs)."""
    apply(kubectl, namespace, pod(name, command))
    wait = kubectl("wait", "-n", namespace, f"pod/{name}", f"--timeout={timeout}s",
                   "--for=jsonpath={.status.phase}=Succeeded", timeout=timeout + 30)
    phase = kubectl("get", "-n", namespace, f"pod/{name}", "-o", "jsonpath={.status.phase}").stdout
    logs = finished_logs(kubectl, namespace, name) if wait.returncode == 0 else \
        kubectl("logs", "-n", namespace, f"pod/{name}").stdout
    if wait.returncode != 0:
        described = kubectl("describe", "-n", namespace, f"pod/{name}").stdout
        pytest.fail(f"pod {name} is {phase!r}, not Succeeded, after {timeout}s\nlogs:\n{logs}\n{described[-3000:]}")
    return phase, logs


def test_node_is_ready_with_the_pinned_version(kubectl: Kubectl):
    node = json.loads(kubectl("get", "node", NODE, "-o", "json", check=True).stdout)
    conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert conditions["Ready"] == "True", node["status"]["conditions"]
    assert node["status"]["nodeInfo"]["kubeletVersion"] == PINNED
    addresses = {a["type"]: a["address"] for a in node["status"]["addresses"]}
    assert addresses["InternalIP"] == NODE_ADDRESS
    server = json.loads(kubectl("version", "-o", "json", check=True).stdout)["serverVersion"]
    assert server["gitVersion"] == PINNED


def test_every_system_pod_is_ready(kubectl: Kubectl):
    pods = json.loads(kubectl("get", "pods", "-n", "kube-system", "-o", "json", check=True).stdout)["items"]
    assert any(p["metadata"]["name"].startswith("coredns-") for p in pods), [p["metadata"]["name"] for p in pods]
    proc = kubectl("wait", "--for=condition=Ready", "pods", "--all", "-n", "kube-system", "--timeout=120s",
                   timeout=150)
    assert proc.returncode == 0, proc.stderr


def test_a_pod_runs_to_succeeded(kubectl: Kubectl, namespace: str):
    phase, logs = run_to_completion(kubectl, namespace, "hello", ["/bin/busybox", "echo", "hello from kp-node"])
    assert phase == "Succeeded"
    assert "hello from kp-node" in logs


def test_service_dns_resolves_from_a_pod(kubectl: Kubectl, namespace: str):
    phase, logs = run_to_completion(kubectl, namespace, "dns", [
        "/bin/sh", "-c",
        "nslookup kubernetes.default.svc.cluster.local && nslookup kube-dns.kube-system.svc.cluster.local"])
    assert phase == "Succeeded"
    assert "203.0.113.1" in logs, logs
    assert "203.0.113.10" in logs, logs


def test_a_pod_reaches_this_machine_another_pod_and_a_service(kubectl: Kubectl, namespace: str):
    apply(kubectl, namespace,
          pod("web", ["/bin/sh", "-c", "mkdir -p /www && echo pong > /www/index.html && exec httpd -f -p 8080 -h /www"],
              restart="Always"),
          {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    kubectl("wait", "-n", namespace, "pod/web", "--for=condition=Ready", "--timeout=120s", timeout=150, check=True)
    web_ip = kubectl("get", "-n", namespace, "pod/web", "-o", "jsonpath={.status.podIP}", check=True).stdout
    assert web_ip.startswith("198.51.100."), web_ip
    # HTTP through nc: the static busybox's wget crashes in a scratch image.
    get = "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5"
    script = (
        f"set -e; echo pod:$({get} {web_ip} 8080 | tail -n 1);"
        f" echo service:$({get} web.{namespace}.svc.cluster.local 80 | tail -n 1);"
        f" nc -w 5 {NODE_ADDRESS} 6443 </dev/null && echo host:reached")
    phase, logs = run_to_completion(kubectl, namespace, "client", ["/bin/sh", "-c", script])
    assert phase == "Succeeded"
    assert "pod:pong" in logs, logs
    assert "service:pong" in logs, logs
    assert "host:reached" in logs, logs


def cluster_pids() -> dict[int, str]:
    """The cluster's processes: the pid files of kube-up and containerd's shims of ours."""
    pids: dict[int, str] = {}
    for pid_file in (KUBE_DIR / "run").glob("*.pid"):
        pid = int(pid_file.read_text().split()[0])
        if psutil.pid_exists(pid):
            pids[pid] = pid_file.stem
    socket = str(KUBE_DIR / "containerd" / "containerd.sock")
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if socket in (proc.info["cmdline"] or []) and proc.info["pid"] not in pids:
            pids[proc.info["pid"]] = "containerd-shim"
    return pids


def test_every_listening_socket_of_the_cluster_is_on_loopback_or_the_bridge():
    pids = cluster_pids()
    expected = {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd", "kubelet",
                "kube-proxy"}
    assert expected <= set(pids.values()), f"not running: {expected - set(pids.values())}"
    listening = [c for c in psutil.net_connections(kind="inet")
                 if c.pid in pids and (c.status == psutil.CONN_LISTEN or (c.type == socket.SOCK_DGRAM and not c.raddr))]
    assert listening, "no listening socket found for the cluster's processes"
    wrong = sorted({f"{pids[c.pid]} {c.laddr.ip}:{c.laddr.port}"
                    for c in listening if c.laddr.ip not in ALLOWED_LISTEN})
    assert not wrong, f"listening beyond 127.0.0.1 and {NODE_ADDRESS}: {wrong}"
    by_component = {pids[c.pid] for c in listening}
    assert "kube-apiserver" in by_component


@pytest.mark.slow
def test_a_second_kube_up_changes_nothing():
    result = run_playbook("kube-up.yml", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:]
    recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", result.stdout, re.M)
    assert recap and all(int(n) == 0 for _, n in recap), (recap, result.stdout[-3000:])
    assert "RESULT: nothing changed" in result.stdout


def test_kubeconfig_points_at_the_bridge_address(kubeconfig: Path):
    config = yaml.safe_load(kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"] == f"https://{NODE_ADDRESS}:6443"


def test_a_kubernetes_client_that_exits_abruptly_leaves_no_key_copy(kubeconfig: Path, tmp_path: Path):
    """The kubernetes Python client copies inline (*-data) certificates and keys to
    TMPDIR and deletes them at a clean exit only; kubernetes.core under Mitogen exits
    without one. With the PKI referenced by path there is nothing to copy."""
    client = (
        "import os, sys\n"
        "from kubernetes import client, config\n"
        "config.load_kube_config(sys.argv[1])\n"
        "print(len(client.CoreV1Api().list_namespace(_request_timeout=20).items))\n"
        "sys.stdout.flush()\n"
        "os._exit(0)\n"  # no atexit handlers, as a Mitogen worker ends
    )
    proc = subprocess.run([sys.executable, "-c", client, str(kubeconfig)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0 and int(proc.stdout) > 0, proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == []

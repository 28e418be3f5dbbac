"""Fixtures of the local-Kubernetes tier (`make test-kube`): the admin kubeconfig of the
cluster `make kube-up` runs, and a kubectl runner bound to it.

The tier needs that cluster: when it is down the tests fail (they do not skip),
saying to run `make kube-up`."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from schedules import SCHEDULES, set_suspended
from strimzi_access import NAMESPACE as STRIMZI_NAMESPACE
from strimzi_access import harness_env

from helpers import ROOT
from pattern_harness import kube_jobs

KUBE_DIR = ROOT / ".run" / "kube"
ADMIN_KUBECONFIG = KUBE_DIR / "admin.kubeconfig"
VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())
KP_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-patterns"

Kubectl = Callable[..., subprocess.CompletedProcess]


def kubectl_command() -> list[str]:
    """kubectl as kube-up links it (.run/kube/bin/kubectl), else the cached kube binary."""
    link = KUBE_DIR / "bin" / "kubectl"
    if link.exists():
        return [str(link)]
    binary = KP_CACHE / "bin" / f"kube-v{VERSIONS['kubernetes_version']}"
    if binary.exists():
        return [str(binary), "kubectl"]
    pytest.fail(f"no kubectl: neither {link} nor {binary} exists: run make kube-up")


@pytest.fixture(scope="session")
def kubeconfig() -> Path:
    """Path of the admin kubeconfig; fails (not skips) when the cluster is not up."""
    if not ADMIN_KUBECONFIG.is_file():
        pytest.fail(f"the local Kubernetes was never started ({ADMIN_KUBECONFIG} is missing): run make kube-up")
    proc = subprocess.run([*kubectl_command(), "--kubeconfig", str(ADMIN_KUBECONFIG), "--request-timeout=10s",
                           "get", "--raw", "/readyz"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 or proc.stdout.strip() != "ok":
        pytest.fail(f"the local Kubernetes is not up (API server /readyz: {(proc.stderr or proc.stdout).strip()}): "
                    "run make kube-up")
    return ADMIN_KUBECONFIG


def kubectl_runner(kubeconfig: Path) -> Kubectl:
    """kubectl(*args, input=None, timeout=120, retry_until_ok=0, check=False) -> CompletedProcess (text).

    retry_until_ok: seconds during which a failing command is run again (e.g. `kubectl wait`
    on a CRD that has no status yet fails at once). check: raise when it finally fails."""
    base = [*kubectl_command(), "--kubeconfig", str(kubeconfig)]

    def run(*args: str, input: str | None = None, timeout: float = 120, retry_until_ok: float = 0,
            check: bool = False) -> subprocess.CompletedProcess:
        deadline = time.monotonic() + retry_until_ok
        while True:
            proc = subprocess.run([*base, *args], input=input, capture_output=True, text=True, timeout=timeout)
            if proc.returncode == 0 or time.monotonic() >= deadline:
                break
            time.sleep(1)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    return run


@pytest.fixture(scope="session")
def kubectl(kubeconfig: Path) -> Kubectl:
    """A kubectl runner bound to the admin kubeconfig (see kubectl_runner)."""
    return kubectl_runner(kubeconfig)


# --- the schedules, paused for the tier ----------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def schedules_paused() -> Iterator[list[tuple[str, str]]]:
    """Every ScheduledSparkApplication that fires is suspended while the tier runs, then
    set firing again. values-local.yaml fires batch-aggregate every minute, and one of
    its runs (a driver and an executor JVM) was starting or running for most of the
    tier, on the 2 cores its other tests share. The test of the schedule resumes it for
    itself (test_spark_operator). Yields the (namespace, name) of those it suspended;
    none when the cluster is down, whose tests fail on their own."""
    if not ADMIN_KUBECONFIG.is_file():
        yield []
        return
    run = kubectl_runner(ADMIN_KUBECONFIG)
    listed = run("get", SCHEDULES, "-A", "-o", "json")
    firing = [] if listed.returncode != 0 else [
        (s["metadata"]["namespace"], s["metadata"]["name"]) for s in json.loads(listed.stdout)["items"]
        if not s["spec"].get("suspend")]
    for namespace, name in firing:
        set_suspended(run, namespace, name, True)
    try:
        yield firing
    finally:
        for namespace, name in firing:
            set_suspended(run, namespace, name, False)


@pytest.fixture
def in_cluster_kafka(kubectl: Kubectl, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness and the kube helpers pointed at the Strimzi-mode release: its namespace,
    its Kafka through the nodeport listener as the harness KafkaUser."""
    for name, value in harness_env(kubectl).items():
        monkeypatch.setenv(name, value)
    assert kube_jobs.connect().namespace == STRIMZI_NAMESPACE

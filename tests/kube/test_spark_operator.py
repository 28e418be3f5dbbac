"""The spark-operator on the local Kubernetes, running what `make deploy STACK=local`
installed (values-local.yaml):

- (a deleted driver pod, resubmitted by the operator and resuming from the checkpoint
  on its volume, is tests/kube/test_patterns.py's exactly-once scenario);
- the ScheduledSparkApplication batch-aggregate fires on its schedule (every minute
  here) and its runs complete (at least two, counted);
- driver and executor pods run on the node's kubelet.

Needs the local cluster (`make kube-up`), the local default (`make up`: Kafka and
PostgreSQL, read and written from here through the inventory) and the deployed stack.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest
from schedules import set_suspended

from helpers import ROOT
from kafka_patterns.clients import postgres
from pattern_harness import generator

STREAMING = "one-to-one"
SCHEDULED = "batch-aggregate"
SPARK_GROUP = "sparkoperator.k8s.io"


def _namespace() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("kp_kube_stack_kube", ROOT / "helm" / "tools" / "kube_stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.namespace("local")


NAMESPACE = _namespace()


def wait_for(what: str, probe: Callable[[], Any], timeout: float, interval: float = 2.0,
             explain: Callable[[], str] = lambda: "") -> Any:
    """Poll probe() until it returns something truthy; fail naming what and why after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}. {explain()}")
        time.sleep(interval)


class Cluster:
    def __init__(self, kubectl) -> None:
        self.kubectl = kubectl

    def get(self, *args: str) -> dict[str, Any]:
        proc = self.kubectl("get", *args, "-n", NAMESPACE, "-o", "json", check=True)
        return json.loads(proc.stdout)

    def app(self, name: str) -> dict[str, Any]:
        return self.get("sparkapplication", name)

    def state(self, name: str) -> str:
        return self.app(name).get("status", {}).get("applicationState", {}).get("state", "")

    def pods(self, app: str, role: str) -> list[dict[str, Any]]:
        return self.get("pods", "-l", f"{SPARK_GROUP}/app-name={app},spark-role={role}")["items"]

    def running_driver(self, app: str) -> dict[str, Any] | None:
        running = [p for p in self.pods(app, "driver") if p["status"].get("phase") == "Running"
                   and not p["metadata"].get("deletionTimestamp")]
        return running[0] if running else None

    def describe(self, app: str) -> str:
        status = self.app(app).get("status", {})
        log = self.kubectl("logs", f"{app}-driver", "-n", NAMESPACE, "--tail=30")
        return (f"SparkApplication {app}: {json.dumps(status.get('applicationState'))}, "
                f"submissions {status.get('submissionAttempts')}, attempts {status.get('executionAttempts')}; "
                f"driver log tail:\n{log.stdout or log.stderr}")

    def node_names(self) -> set[str]:
        proc = self.kubectl("get", "nodes", "-o", "json", check=True)
        return {n["metadata"]["name"] for n in json.loads(proc.stdout)["items"]}


@pytest.fixture(scope="module")
def k8s(kubectl) -> Cluster:
    return Cluster(kubectl)


@pytest.fixture(scope="module")
def streaming_app(k8s, cluster) -> str:
    """one-to-one RUNNING (the deploy waited for it; after a redeploy it may still start)."""
    wait_for(f"SparkApplication {STREAMING} to be RUNNING (run `make deploy STACK=local`)",
             lambda: k8s.state(STREAMING) == "RUNNING" and k8s.running_driver(STREAMING), 600,
             explain=lambda: k8s.describe(STREAMING))
    return STREAMING


def test_driver_and_executor_pods_run_on_the_kubelet(k8s, streaming_app):
    nodes = k8s.node_names()
    driver = k8s.running_driver(streaming_app)
    assert driver["spec"]["nodeName"] in nodes
    assert all(c["ready"] for c in driver["status"]["containerStatuses"]), driver["status"]
    # The image `make image` built, imported into containerd (pullPolicy Never).
    assert "kafka-patterns-spark:" in driver["spec"]["containers"][0]["image"]
    executors = wait_for(f"{streaming_app}'s executor pods to run",
                         lambda: [p for p in k8s.pods(streaming_app, "executor")
                                  if p["status"].get("phase") == "Running"],
                         300, explain=lambda: k8s.describe(streaming_app))
    assert all(p["spec"]["nodeName"] in nodes for p in executors)
    # A tenth of a core requested (values-local.yaml): the 2-core node fits them all.
    requests = driver["spec"]["containers"][0]["resources"]["requests"]
    assert requests["cpu"] == "100m", requests


@pytest.fixture
def schedule_firing(kubectl, schedules_paused) -> Iterator[None]:
    """The schedule under test firing (the tier pauses every schedule: conftest), for this test only."""
    paused = (_namespace(), SCHEDULED) in schedules_paused
    if paused:
        set_suspended(kubectl, _namespace(), SCHEDULED, False)
    try:
        yield
    finally:
        if paused:
            set_suspended(kubectl, _namespace(), SCHEDULED, True)


@pytest.mark.timeout(1800)
def test_the_scheduled_application_fires_on_its_schedule_and_its_runs_complete(k8s, cluster, schedule_firing):
    scheduled = k8s.get("scheduledsparkapplication", SCHEDULED)
    schedule = scheduled["spec"]["schedule"]
    assert schedule == "@every 1m", f"values-local.yaml fires {SCHEDULED} every minute, found {schedule!r}"
    wait_for(f"ScheduledSparkApplication {SCHEDULED} to be Scheduled",
             lambda: k8s.get("scheduledsparkapplication", SCHEDULED).get("status", {}).get("scheduleState")
             == "Scheduled", 120)
    # New input for the runs to aggregate.
    produced = generator.produce("weather.readings", 300)
    assert not produced.errors, produced.errors
    started = time.time()

    def runs() -> dict[str, dict[str, Any]]:
        """This schedule's runs (SparkApplications it owns), created since the test began."""
        out = {}
        for app in k8s.get("sparkapplications")["items"]:
            owners = app["metadata"].get("ownerReferences", [])
            created = datetime.fromisoformat(app["metadata"]["creationTimestamp"].replace("Z", "+00:00")).timestamp()
            if any(o["kind"] == "ScheduledSparkApplication" and o["name"] == SCHEDULED for o in owners) \
                    and created >= started - 1:
                out[app["metadata"]["name"]] = app
        return out

    completed: dict[str, float] = {}
    failed: set[str] = set()

    def two_completed() -> bool:
        for name, app in runs().items():
            state = app.get("status", {}).get("applicationState", {}).get("state")
            if state == "COMPLETED":
                completed.setdefault(name, time.time())
            elif state in ("FAILED", "SUBMISSION_FAILED"):
                failed.add(name)
        return len(completed) >= 2

    def explain() -> str:
        status = k8s.get("scheduledsparkapplication", SCHEDULED).get("status", {})
        last = status.get("lastRunName")
        return (f"completed {sorted(completed)}, failed {sorted(failed)}; schedule status {json.dumps(status)}"
                + (f"; {k8s.describe(last)}" if last else ""))

    wait_for(f"two runs of {SCHEDULED} to complete", two_completed, 1500, interval=5, explain=explain)
    print(f"\n{SCHEDULED}: runs completed {', '.join(f'{n} after {t - started:.0f}s' for n, t in completed.items())}")
    assert not failed, explain()
    # Fired by the schedule: runs one after the other (concurrencyPolicy Forbid), the
    # schedule's status names them.
    status = k8s.get("scheduledsparkapplication", SCHEDULED)["status"]
    assert status["lastRun"] and status["nextRun"]
    assert set(completed) & {*status.get("pastSuccessfulRunNames", []), status.get("lastRunName")}
    # The runs read Kafka as their catalogue user and wrote their ledger: the readings
    # produced above are aggregated by some run (batch_runs counts each run's records).
    rows = postgres.query("SELECT count(*), max(finished_at) FROM batch_runs WHERE ledger_key = %s", (SCHEDULED,))
    assert rows[0][0] >= 1 and rows[0][1].timestamp() >= started, rows

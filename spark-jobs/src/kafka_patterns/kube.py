"""Catalogue jobs as the SparkApplications `make deploy` installed, seen from outside
the cluster: run a job once with a scenario's arguments, find and delete a streaming
job's driver pod, wait on application states.

A one-shot run is a copy of the deployed application's spec (image, service account,
volumes, the Kafka and PostgreSQL settings and Secrets the chart gave it), with the
scenario's arguments and no restarts: the scenario measures exactly what the
deployment runs. The kubeconfig is $KUBECONFIG, else the local cluster's
(`make kube-up`); the namespace is $KP_NAMESPACE, else the local stack's.
"""

from __future__ import annotations

import copy
import os
import time
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath

from kafka_patterns import catalogue

GROUP, VERSION = "sparkoperator.k8s.io", "v1beta2"
LOCAL_KUBECONFIG = catalogue.ROOT / ".run" / "kube" / "admin.kubeconfig"
DEFAULT_NAMESPACE = "kafka-patterns"
FINAL_STATES = {"COMPLETED", "FAILED", "SUBMISSION_FAILED", "INVALIDATING"}


class KubeError(RuntimeError):
    """The cluster or a SparkApplication is not as a scenario needs it; says what to do."""


@dataclass(frozen=True)
class Cluster:
    namespace: str
    custom: object  # kubernetes.client.CustomObjectsApi
    core: object    # kubernetes.client.CoreV1Api


def k8s_name(name: str) -> str:
    """The chart's kp.k8sName for names up to 63 characters (every catalogue job's)."""
    return name.lower().replace(".", "-").replace("_", "-")


@cache
def connect() -> Cluster:
    from kubernetes import client, config

    path = os.environ.get("KUBECONFIG") or str(LOCAL_KUBECONFIG)
    if not Path(path).is_file():
        raise KubeError(f"no kubeconfig at {path}: run `make kube-up` (or set KUBECONFIG)")
    api = config.new_client_from_config(config_file=path)
    return Cluster(os.environ.get("KP_NAMESPACE", DEFAULT_NAMESPACE),
                   client.CustomObjectsApi(api), client.CoreV1Api(api))


def _get(cluster: Cluster, plural: str, name: str) -> dict | None:
    from kubernetes.client.exceptions import ApiException

    try:
        return cluster.custom.get_namespaced_custom_object(GROUP, VERSION, cluster.namespace, plural, name)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def deployed_spec(cluster: Cluster, job: str) -> dict:
    """The spec the deployment runs the job with: its SparkApplication's, or the
    template of its ScheduledSparkApplication."""
    name = k8s_name(job)
    app = _get(cluster, "sparkapplications", name)
    if app is not None:
        return app["spec"]
    scheduled = _get(cluster, "scheduledsparkapplications", name)
    if scheduled is not None:
        return scheduled["spec"]["template"]
    raise KubeError(f"job {job} is not deployed in namespace {cluster.namespace} (no SparkApplication or "
                    f"ScheduledSparkApplication {name}): run `make deploy`, with the job in spark.jobs.include")


def checkpoint_root(spec: dict) -> PurePosixPath:
    """Where the job's pods keep checkpoints (the chart's CHECKPOINT_ROOT)."""
    for env in spec.get("driver", {}).get("env", []):
        if env.get("name") == "CHECKPOINT_ROOT":
            return PurePosixPath(env["value"])
    raise KubeError("the deployed spec sets no CHECKPOINT_ROOT on the driver: redeploy with the project's chart")


def app_state(cluster: Cluster, name: str) -> str:
    app = _get(cluster, "sparkapplications", name) or {}
    return app.get("status", {}).get("applicationState", {}).get("state", "")


def wait_for_state(cluster: Cluster, name: str, wanted: set[str], timeout: float) -> str:
    """Poll the application's state until it is one of `wanted` (or final)."""
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        state = app_state(cluster, name)
        if state in wanted or state in FINAL_STATES:
            return state
        time.sleep(1)
    raise TimeoutError(f"SparkApplication {name} still {state or 'without a state'} after {timeout:.0f}s "
                       f"(kubectl describe sparkapplication {name} -n {cluster.namespace})")


def driver_log_tail(cluster: Cluster, name: str, lines: int = 40) -> str:
    from kubernetes.client.exceptions import ApiException

    app = _get(cluster, "sparkapplications", name) or {}
    pod = app.get("status", {}).get("driverInfo", {}).get("podName") or f"{name}-driver"
    try:
        return cluster.core.read_namespaced_pod_log(pod, cluster.namespace, tail_lines=lines)
    except ApiException as e:
        return f"(no log of pod {pod}: {e.reason})"


def run_once(job: str, args: list[str], timeout: float = 600) -> str:
    """Run the job once, with these arguments, as a SparkApplication copied from the
    deployed one; wait until it completes, then delete it. Returns its name."""
    cluster = connect()
    spec = copy.deepcopy(deployed_spec(cluster, job))
    spec["arguments"] = [catalogue.jobs()[job]["module"], *args]
    spec["restartPolicy"] = {"type": "Never"}
    name = f"{k8s_name(job)[:40]}-run-{uuid.uuid4().hex[:8]}"
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "SparkApplication",
            "metadata": {"name": name, "labels": {"kafka-patterns/job": job, "kafka-patterns/run": "once"}},
            "spec": spec}
    cluster.custom.create_namespaced_custom_object(GROUP, VERSION, cluster.namespace, "sparkapplications", body)
    state = wait_for_state(cluster, name, {"COMPLETED"}, timeout)
    if state != "COMPLETED":
        raise KubeError(f"SparkApplication {name} ended {state}; its driver's log ends with:\n"
                        + driver_log_tail(cluster, name))
    cluster.custom.delete_namespaced_custom_object(GROUP, VERSION, cluster.namespace, "sparkapplications", name)
    return name


def driver_pod(job: str) -> dict | None:
    """The running driver pod of a deployed streaming job, if there is one."""
    cluster = connect()
    pods = cluster.core.list_namespaced_pod(
        cluster.namespace, label_selector=f"spark-role=driver,sparkoperator.k8s.io/app-name={k8s_name(job)}")
    running = [p for p in pods.items if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    return running[0] if running else None


def delete_driver(job: str, timeout: float = 300) -> str:
    """Delete the streaming job's driver pod (no grace period: like a lost node) once
    one runs, and return its name; the operator restarts the application, which
    resumes from its checkpoint."""
    cluster = connect()
    deadline = time.monotonic() + timeout
    while (pod := driver_pod(job)) is None:
        if time.monotonic() >= deadline:
            raise KubeError(f"job {job} has had no running driver pod for {timeout:.0f}s (kubectl describe "
                            f"sparkapplication {k8s_name(job)} -n {cluster.namespace})")
        time.sleep(1)
    cluster.core.delete_namespaced_pod(pod.metadata.name, cluster.namespace, grace_period_seconds=0)
    return pod.metadata.name

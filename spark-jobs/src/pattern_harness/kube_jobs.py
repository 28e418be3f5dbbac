"""Catalogue jobs as `make deploy` installed them, seen from outside the cluster: run a
Spark job once with a scenario's arguments, find and delete a streaming job's driver
pod, wait on application states; wait for a client job's Deployment, list and delete
its pods, run a one-shot client job (replay) from its CronJob's template; read the
KafkaConnectors' states and configs.

A one-shot run is a copy of the deployed application's spec (image, service account,
volumes, the Kafka and PostgreSQL settings and Secrets the chart gave it), with the
scenario's arguments and no restarts: the scenario measures exactly what the
deployment runs. The kubeconfig is $KUBECONFIG, else the local cluster's
(`make kube-up`); the namespace is $KP_NAMESPACE, else the local stack's.
"""

from __future__ import annotations

import copy
import json
import os
import time
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath

from kafka_patterns.config import catalogue
from kafka_patterns.config.names import k8s_name

GROUP, VERSION = "sparkoperator.k8s.io", "v1beta2"
STRIMZI_GROUP, STRIMZI_VERSION = "kafka.strimzi.io", "v1"
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
    apps: object    # kubernetes.client.AppsV1Api
    batch: object   # kubernetes.client.BatchV1Api


def namespace() -> str:
    return os.environ.get("KP_NAMESPACE", DEFAULT_NAMESPACE)


def connect() -> Cluster:
    """The cluster's API clients in the namespace of $KP_NAMESPACE at the time of the call
    (a test may point the helpers at another release)."""
    return _connect(namespace())


@cache
def _connect(namespace: str) -> Cluster:
    from kubernetes import client, config

    path = os.environ.get("KUBECONFIG") or str(LOCAL_KUBECONFIG)
    if not Path(path).is_file():
        raise KubeError(f"no kubeconfig at {path}: run `make kube-up` (or set KUBECONFIG)")
    api = config.new_client_from_config(config_file=path)
    return Cluster(namespace, client.CustomObjectsApi(api),
                   client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api))


def _get(cluster: Cluster, plural: str, name: str) -> dict | None:
    from kubernetes.client.exceptions import ApiException

    try:
        return cluster.custom.get_namespaced_custom_object(GROUP, VERSION, cluster.namespace, plural, name)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


@dataclass(frozen=True)
class Connector:
    """A KafkaConnector as Strimzi reports it: Connect's state of the connector
    (RUNNING, PAUSED, FAILED, "" before the first report) and its tasks', and the config
    the release gave it."""

    name: str
    state: str
    task_states: tuple[str, ...]
    config: dict

    @property
    def running(self) -> bool:
        return self.state == "RUNNING" and bool(self.task_states) and all(t == "RUNNING" for t in self.task_states)


def connectors(cluster: Cluster) -> dict[str, Connector]:
    """The KafkaConnectors of the namespace by name (the Strimzi-mode release's)."""
    items = cluster.custom.list_namespaced_custom_object(STRIMZI_GROUP, STRIMZI_VERSION, cluster.namespace,
                                                         "kafkaconnectors")["items"]
    out = {}
    for c in items:
        status = c.get("status", {}).get("connectorStatus", {})
        out[c["metadata"]["name"]] = Connector(
            c["metadata"]["name"], status.get("connector", {}).get("state", ""),
            tuple(t.get("state", "") for t in status.get("tasks", [])), c["spec"].get("config", {}))
    return out


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
    delete_pod(pod.metadata.name)
    return pod.metadata.name


def delete_pod(name: str) -> None:
    """Delete a pod with no grace period: its processes are killed, like on a lost node."""
    cluster = connect()
    cluster.core.delete_namespaced_pod(name, cluster.namespace, grace_period_seconds=0)


def client_pods(job: str) -> list[str]:
    """The names of a client job's pods that run and are ready (not being deleted),
    oldest first."""
    cluster = connect()
    pods = cluster.core.list_namespaced_pod(cluster.namespace, label_selector=f"kafka-patterns/job={job}")
    ready = [p for p in pods.items if p.status.phase == "Running" and not p.metadata.deletion_timestamp
             and all(c.ready for c in p.status.container_statuses or [])]
    return [p.metadata.name for p in sorted(ready, key=lambda p: p.metadata.creation_timestamp)]


def wait_for_deployment(job: str, timeout: float = 300) -> list[str]:
    """Wait until a client job's Deployment has all its pods of the current template
    ready (a deleted pod replaced, a rollout done); returns their names."""
    from kubernetes.client.exceptions import ApiException

    cluster = connect()
    name = k8s_name(job)
    deadline = time.monotonic() + timeout
    while True:
        try:
            d = cluster.apps.read_namespaced_deployment(name, cluster.namespace)
        except ApiException as e:
            if e.status == 404:
                raise KubeError(f"job {job} is not deployed in namespace {cluster.namespace} (no Deployment "
                                f"{name}): run `make deploy`, with the job in clients.jobs.include") from None
            raise
        s, wanted = d.status, d.spec.replicas
        pods = client_pods(job)
        if ((s.observed_generation or 0) >= d.metadata.generation and (s.updated_replicas or 0) == wanted
                and (s.available_replicas or 0) == wanted and len(pods) == wanted):
            return pods
        if time.monotonic() >= deadline:
            raise TimeoutError(f"Deployment {name}: {s.available_replicas or 0}/{wanted} pods available, "
                               f"{len(pods)} ready after {timeout:.0f}s (kubectl describe deployment {name} "
                               f"-n {cluster.namespace}; kubectl logs -l kafka-patterns/job={job})")
        time.sleep(1)


def run_client_once(job: str, args: list[str], timeout: float = 600) -> str:
    """Run a one-shot client job (replay) once with these arguments, as a Job made from
    its suspended CronJob's template (image, user, Secrets, environment: what the
    deployment runs); wait until it succeeds, then delete it. Returns its name."""
    from kubernetes.client.exceptions import ApiException

    cluster = connect()
    cron = k8s_name(job)
    try:
        # As a plain dict: the template is copied, not interpreted.
        raw = cluster.batch.read_namespaced_cron_job(cron, cluster.namespace, _preload_content=False)
    except ApiException as e:
        if e.status == 404:
            raise KubeError(f"job {job} is not deployed in namespace {cluster.namespace} (no CronJob {cron}): "
                            "run `make deploy`, with the job in clients.jobs.include") from None
        raise
    template = json.loads(raw.data)["spec"]["jobTemplate"]
    (container,) = template["spec"]["template"]["spec"]["containers"]
    container["args"] = [catalogue.job(job).module, *args]  # the job reads its catalogue args itself
    name = f"{cron[:40]}-run-{uuid.uuid4().hex[:8]}"
    labels = {**template.get("metadata", {}).get("labels", {}), "kafka-patterns/run": "once"}
    cluster.batch.create_namespaced_job(cluster.namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels},
        "spec": template["spec"]})
    deadline = time.monotonic() + timeout
    while (ended := _job_ended(cluster, name)) is None:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"Job {name} still running after {timeout:.0f}s "
                               f"(kubectl describe job {name} -n {cluster.namespace})")
        time.sleep(1)
    if ended != "Complete":
        pods = cluster.core.list_namespaced_pod(cluster.namespace, label_selector=f"job-name={name}").items
        logs = [cluster.core.read_namespaced_pod_log(p.metadata.name, cluster.namespace, tail_lines=40)
                for p in sorted(pods, key=lambda p: p.metadata.creation_timestamp)[-1:]]
        raise KubeError(f"Job {name} failed; its last pod's log ends with:\n" + "".join(logs))
    cluster.batch.delete_namespaced_job(name, cluster.namespace, propagation_policy="Background")
    return name


def _job_ended(cluster: Cluster, name: str) -> str | None:
    """The condition the Job ended with (Complete or Failed); None while it runs."""
    conditions = cluster.batch.read_namespaced_job_status(name, cluster.namespace).status.conditions or []
    return next((c.type for c in conditions if c.type in ("Complete", "Failed") and c.status == "True"), None)

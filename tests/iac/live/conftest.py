"""Live checks of a deployed Kubernetes path: `make deploy` runs them after the
rollout, `make test-iac` against the stack of the current kube context (the local
cluster's when it is the current one, or when no context is set and `make kube-up`
ran: helm/tools/kube_stack.py). Every test skips, with the reason printed (-rs), when
there is no kubectl, no kube context, no reachable API server or nothing deployed;
the Strimzi checks look at the local stack's Strimzi-mode release, and skip on another
stack that brings its own Kafka.

KP_LIVE_STACK (local, dev, prod), KP_LIVE_NAMESPACE, KP_LIVE_OPERATOR_NAMESPACE,
KP_LIVE_CLUSTER, KP_LIVE_CONNECT, KP_LIVE_KAFKA_EXTERNAL (true/false) and KP_KUBECTL
name what to check (the deploy playbook sets them); without them everything comes from
the stack: its namespaces (pulumi/Pulumi.<stack>.yaml), its values file, the catalogue.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest
from live_cluster import Live
from manifests import load_module, values_of

from helpers import ROOT

kube_stack = load_module("kp_kube_stack", ROOT / "helm" / "tools" / "kube_stack.py")


def _variant(stack: str) -> str:
    return kube_stack.values_file(stack).stem.removeprefix("values-")


@pytest.fixture(scope="session")
def live(cat) -> Live:
    stack = os.environ.get("KP_LIVE_STACK") or kube_stack.current_stack()
    kubectl = kube_stack.kubectl()
    if kubectl is None:
        pytest.skip("live checks skipped: kubectl is not installed (`make kube-up` builds one)")
    env = dict(os.environ)
    if kube_stack.kubeconfig(stack):
        env["KUBECONFIG"] = kube_stack.kubeconfig(stack)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubectl, *args], capture_output=True, text=True, timeout=30, env=env, check=False)

    context = run("config", "current-context")
    if context.returncode != 0 or not context.stdout.strip():
        pytest.skip("live checks skipped: no kube context is configured (set KUBECONFIG or "
                    "`kubectl config use-context <name>`, or `make kube-up` for the local cluster)")
    if run("version", "--request-timeout=10s").returncode != 0:
        pytest.skip(f"live checks skipped: the API server of context {context.stdout.strip()} does not answer")
    values = values_of(_variant(stack))
    external = os.environ.get("KP_LIVE_KAFKA_EXTERNAL", str(values["kafka"]["external"]["enabled"])).lower() == "true"
    namespace = os.environ.get("KP_LIVE_NAMESPACE") or kube_stack.namespace(stack)
    cluster = os.environ.get("KP_LIVE_CLUSTER") or values["kafka"]["clusterName"] or cat["cluster"]["name"]
    if external:
        found = run("get", "sparkapplications,scheduledsparkapplications", "-l", "kafka-patterns/job",
                    "-n", namespace, "-o", "name")
        if found.returncode != 0 or not found.stdout.strip():
            pytest.skip(f"live checks skipped: no Spark application of ours in namespace {namespace} of stack "
                        f"{stack} (run `make deploy STACK={stack}`) {found.stderr.strip()}")
    else:
        found = run("get", "kafka", cluster, "-n", namespace)
        if found.returncode != 0:
            pytest.skip(f"live checks skipped: no Kafka {cluster} in namespace {namespace} (run `make deploy`): "
                        + found.stderr.strip())
    include = values["spark"]["jobs"]["include"]
    schedules = values["spark"]["scheduled"]["schedules"]
    jobs = [j for j in cat["jobs"] if j["engine"] == "spark" and values["spark"]["enabled"]
            and (not include or j["name"] in include)]
    clients = values["clients"]["jobs"]["include"]
    return Live(stack=stack, namespace=namespace,
                operator_namespace=os.environ.get("KP_LIVE_OPERATOR_NAMESPACE") or kube_stack.operator_namespace(stack),
                cluster=cluster, connect=os.environ.get("KP_LIVE_CONNECT") or f"{cluster}-connect",
                kafka_external=external,
                streaming_jobs=[j["name"] for j in jobs if not (j.get("schedule") or j["name"] in schedules)],
                scheduled_jobs=[j["name"] for j in jobs if j.get("schedule") or j["name"] in schedules],
                client_jobs=[j["name"] for j in cat["jobs"] if j["engine"] == "client" and values["clients"]["enabled"]
                             and (not clients or j["name"] in clients)],
                kubectl=kubectl, env=env)


@pytest.fixture
def strimzi(live) -> Live:
    """Where the stack's Strimzi operator runs its Kafka, for the checks of what it runs:
    the platform of a Strimzi stack; the local stack's Strimzi-mode release beside its
    bring-your-own platform (KP_LIVE_STRIMZI_NAMESPACE, else kube_stack's)."""
    if not live.kafka_external:
        return live
    namespace = os.environ.get("KP_LIVE_STRIMZI_NAMESPACE") or kube_stack.strimzi_namespace(live.stack)
    if namespace is None:
        pytest.skip(f"bring-your-own Kafka: no Strimzi cluster (stack {live.stack})")
    if live.run("get", "kafka", live.cluster, "-n", namespace).returncode != 0:
        pytest.skip(f"no Kafka {live.cluster} in namespace {namespace} of stack {live.stack} "
                    f"(run `make deploy STACK={live.stack}`)")
    return dataclasses.replace(live, namespace=namespace, kafka_external=False)

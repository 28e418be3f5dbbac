"""Which stack of the Kubernetes path a command means, and how to reach it.

    python helm/tools/kube_stack.py stack              # local | dev
    python helm/tools/kube_stack.py namespace [STACK]  # the stack's platform namespace
    python helm/tools/kube_stack.py operator-namespace [STACK]
    python helm/tools/kube_stack.py kubeconfig [STACK] # the kubeconfig to use ("" = kubectl's default)
    python helm/tools/kube_stack.py kubectl            # the kubectl to run
    python helm/tools/kube_stack.py status [STACK]     # what `make k8s-status` prints

Stacks: dev and prod are Pulumi stacks (pulumi/Pulumi.<stack>.yaml) on the cluster of
the current kube context; local is the `make kube-up` cluster, deployed by Ansible and
helm (role k8s_helm), always through its own admin kubeconfig.

Without STACK, the stack is local when kubectl's current context is the local
cluster's (its API server is the one in .run/kube/admin.kubeconfig), or when no
context is configured at all and the local cluster's kubeconfig exists; dev otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
LOCAL_KUBECONFIG = ROOT / ".run" / "kube" / "admin.kubeconfig"
LOCAL_STACK_DEFAULTS = ROOT / "ansible" / "roles" / "k8s_helm" / "defaults" / "main.yml"
PULUMI_DIR = ROOT / "pulumi"
CHART_DIR = ROOT / "helm" / "kafka-patterns"


def _load(path: Path) -> dict[str, Any]:
    try:
        return yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}


def kubeconfig_files() -> list[Path]:
    """The files kubectl would read: $KUBECONFIG (colon-separated), else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def _server(files: list[Path]) -> str | None:
    """API server URL of the current context, merged as kubectl merges: the first file
    that sets current-context wins, and so does the first definition of a name."""
    docs = [_load(f) for f in files if f.is_file()]
    current = next((d["current-context"] for d in docs if d.get("current-context")), None)
    if not current:
        return None

    def named(section: str, name: str) -> dict[str, Any]:
        for d in docs:
            for entry in d.get(section) or []:
                if entry.get("name") == name:
                    return entry.get(section.removesuffix("s"), {}) or {}
        return {}

    cluster = named("contexts", current).get("cluster")
    return named("clusters", cluster).get("server") if cluster else None


def current_stack() -> str:
    if not LOCAL_KUBECONFIG.is_file():
        return "dev"
    server = _server(kubeconfig_files())
    if server is None:
        return "local"
    return "local" if server == _server([LOCAL_KUBECONFIG]) else "dev"


def kubeconfig(stack: str) -> str:
    return str(LOCAL_KUBECONFIG) if stack == "local" else os.environ.get("KUBECONFIG", "")


def _local_defaults() -> dict[str, Any]:
    return _load(LOCAL_STACK_DEFAULTS)


def _pulumi(stack: str) -> dict[str, Any]:
    path = PULUMI_DIR / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        stacks = sorted(p.stem.removeprefix("Pulumi.") for p in PULUMI_DIR.glob("Pulumi.*.yaml"))
        raise SystemExit(f"unknown STACK {stack!r}: expected local or one of {', '.join(stacks)}")
    return _load(path).get("config", {})


def namespace(stack: str) -> str:
    if stack == "local":
        return _local_defaults()["k8s_helm_namespace"]
    return _pulumi(stack)["kafka-patterns:namespace"]


def operator_namespace(stack: str) -> str:
    if stack == "local":
        return _local_defaults()["k8s_helm_operator_namespace"]
    return _pulumi(stack)["kafka-patterns:operatorNamespace"]


def values_file(stack: str) -> Path:
    if stack == "local":
        return CHART_DIR / "values-local.yaml"
    return CHART_DIR / _pulumi(stack)["kafka-patterns:valuesFile"]


def kafka_external(stack: str) -> bool:
    """The stack's chart values bring their own Kafka (kafka.external.enabled)."""
    defaults = _load(CHART_DIR / "values.yaml")["kafka"]["external"]["enabled"]
    return bool(((_load(values_file(stack)).get("kafka") or {}).get("external") or {}).get("enabled", defaults))


def kubectl() -> str | None:
    """$KP_KUBECTL, else the local cluster's kubectl (`make kube-up` links it into
    .run/kube/bin), else kubectl on PATH."""
    candidates = [os.environ.get("KP_KUBECTL"), ROOT / ".run" / "kube" / "bin" / "kubectl",
                  ROOT / ".cache" / "bin" / "kubectl", shutil.which("kubectl")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


# (title, kubectl get arguments) of `make k8s-status`; {ns} / {ons}: platform / operator namespace.
STATUS_OPERATORS = [("operators", ["deployments", "-n", "{ons}", "-o", "wide"])]
STATUS_STRIMZI = [("Strimzi resources", ["kafka,kafkanodepool,kafkatopic,kafkauser,kafkaconnect,kafkaconnector",
                                         "-n", "{ns}"])]
STATUS_SPARK = [
    ("SparkApplications", ["sparkapplications", "-n", "{ns}", "-o",
                           "custom-columns=NAME:.metadata.name,STATE:.status.applicationState.state,"
                           "SUBMISSIONS:.status.submissionAttempts,ATTEMPTS:.status.executionAttempts,"
                           "DRIVER:.status.driverInfo.podName,SUBMITTED:.status.lastSubmissionAttemptTime,"
                           "ENDED:.status.terminationTime"]),
    ("ScheduledSparkApplications", ["scheduledsparkapplications", "-n", "{ns}", "-o",
                                    "custom-columns=NAME:.metadata.name,SCHEDULE:.spec.schedule,"
                                    "STATE:.status.scheduleState,LAST RUN:.status.lastRun,"
                                    "LAST RUN NAME:.status.lastRunName,NEXT RUN:.status.nextRun,"
                                    "COMPLETED RUNS KEPT:.status.pastSuccessfulRunNames,"
                                    "FAILED RUNS KEPT:.status.pastFailedRunNames"]),
    # The client jobs: Deployments, the replay CronJob and the Jobs started from it.
    ("client jobs", ["deployments,cronjobs,jobs", "-n", "{ns}", "-l", "kafka-patterns/job", "-o", "wide"]),
    ("pods", ["pods", "-n", "{ns}", "-o", "wide"]),
    ("volumes", ["persistentvolumeclaims", "-n", "{ns}", "-o", "wide"]),
]


def status(stack: str) -> int:
    """Operators, Strimzi resources (Strimzi stacks), Spark applications with their
    state, scheduled ones with their last run, client jobs, pods and claims of the stack."""
    binary = kubectl()
    if binary is None:
        print("kubectl not found: run `make kube-up` (it builds one) or install kubectl", file=sys.stderr)
        return 1
    env = dict(os.environ)
    config = kubeconfig(stack)
    if config:
        env["KUBECONFIG"] = config
    if stack == "local" and not LOCAL_KUBECONFIG.is_file():
        print("the local Kubernetes is not up: run `make kube-up`", file=sys.stderr)
        return 1
    probe = subprocess.run([binary, "version", "--request-timeout=10s"], env=env, capture_output=True,
                           text=True, check=False)
    if probe.returncode != 0:
        hint = " (is the local Kubernetes up? `make kube-up`)" if stack == "local" else ""
        print(f"the API server of stack {stack} does not answer{hint}: {probe.stderr.strip()}", file=sys.stderr)
        return 1
    ns, ons = namespace(stack), operator_namespace(stack)
    sections = STATUS_OPERATORS + ([] if kafka_external(stack) else STATUS_STRIMZI) + STATUS_SPARK
    print(f"stack {stack}: namespace {ns}, operators in {ons}"
          + (", bring-your-own Kafka" if kafka_external(stack) else ""))
    rc = 0
    for title, args in sections:
        print(f"\n== {title}")
        sys.stdout.flush()
        proc = subprocess.run([binary, "get", *[a.format(ns=ns, ons=ons) for a in args]], env=env, check=False)
        rc = rc or proc.returncode
    return rc


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"stack", "namespace", "operator-namespace", "kubeconfig", "kubectl", "status"}:
        print(__doc__, file=sys.stderr)
        return 2
    what, stack = argv[0], (argv[1] if len(argv) > 1 and argv[1] else current_stack())
    if what == "stack":
        print(stack)
    elif what == "namespace":
        print(namespace(stack))
    elif what == "operator-namespace":
        print(operator_namespace(stack))
    elif what == "kubeconfig":
        print(kubeconfig(stack))
    elif what == "status":
        return status(stack)
    else:
        found = kubectl()
        if found is None:
            print("kubectl not found: run `make kube-up` (it builds one) or install kubectl "
                  "(https://kubernetes.io/docs/tasks/tools/)", file=sys.stderr)
            return 1
        print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

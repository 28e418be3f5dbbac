"""Which stack of the Kubernetes path a command means, and how to reach it.

    python helm/tools/kube_stack.py stack              # local | dev
    python helm/tools/kube_stack.py namespace [STACK]  # the stack's platform namespace
    python helm/tools/kube_stack.py operator-namespace [STACK]
    python helm/tools/kube_stack.py kubeconfig [STACK] # the kubeconfig to use ("" = kubectl's default)
    python helm/tools/kube_stack.py kubectl            # the kubectl to run
    python helm/tools/kube_stack.py status [STACK]     # what `make k8s-status` prints

Stacks are Pulumi stacks (pulumi/Pulumi.<stack>.yaml): dev and prod on the cluster of
the current kube context; local on the `make kube-up` cluster, always through its own
admin kubeconfig.

Without STACK, the stack is local when kubectl's current context is the local
cluster's (its API server is the one in .run/kube/admin.kubeconfig), or when no
context is configured at all and the local cluster's kubeconfig exists; dev otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
LOCAL_KUBECONFIG = ROOT / ".run" / "kube" / "admin.kubeconfig"
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


def _pulumi(stack: str) -> dict[str, Any]:
    path = PULUMI_DIR / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        stacks = sorted(p.stem.removeprefix("Pulumi.") for p in PULUMI_DIR.glob("Pulumi.*.yaml"))
        raise SystemExit(f"unknown STACK {stack!r}: expected one of {', '.join(stacks)}")
    return _load(path).get("config", {})


def namespace(stack: str) -> str:
    return _pulumi(stack)["kafka-patterns:namespace"]


def operator_namespace(stack: str) -> str:
    return _pulumi(stack)["kafka-patterns:operatorNamespace"]


def values_file(stack: str) -> Path:
    return CHART_DIR / _pulumi(stack)["kafka-patterns:valuesFile"]


def strimzi_namespace(stack: str) -> str | None:
    """Where the stack's Strimzi Kafka runs: the namespace of its Strimzi-mode release
    (strimziRelease of the stack config), else its platform namespace unless it brings its
    own Kafka; None when the stack has none."""
    second = _pulumi(stack).get("kafka-patterns:strimziRelease")
    if second:
        return second["namespace"]
    return None if kafka_external(stack) else namespace(stack)


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
# {kns}: the namespace of the stack's Strimzi Kafka (strimzi_namespace).
STATUS_STRIMZI = [
    ("Kafka and node pools", ["kafka,kafkanodepool", "-n", "{kns}"]),
    ("Connect and connectors", ["kafkaconnect,kafkaconnector", "-n", "{kns}", "-o",
                                "custom-columns=KIND:.kind,NAME:.metadata.name,"
                                "READY:.status.conditions[?(@.type=='Ready')].status,"
                                "STATE:.status.connectorStatus.connector.state,REPLICAS:.status.replicas"]),
]
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
    ns, ons, kns = namespace(stack), operator_namespace(stack), strimzi_namespace(stack)
    print(f"stack {stack}: namespace {ns}, operators in {ons}"
          + (", bring-your-own Kafka" if kafka_external(stack) else "")
          + (f", Strimzi Kafka in {kns}" if kns and kns != ns else ""))
    rc = 0
    for title, args in STATUS_OPERATORS + (STATUS_STRIMZI if kns else []):
        rc = _section(binary, env, title, [a.format(ns=ns, ons=ons, kns=kns) for a in args]) or rc
    if kns:
        rc = _not_ready(binary, env, kns) or rc
    for title, args in STATUS_SPARK:
        rc = _section(binary, env, title, [a.format(ns=ns, ons=ons, kns=kns) for a in args]) or rc
    return rc


def _section(binary: str, env: dict[str, str], title: str, args: list[str]) -> int:
    print(f"\n== {title}")
    sys.stdout.flush()
    return subprocess.run([binary, "get", *args], env=env, check=False).returncode


def _not_ready(binary: str, env: dict[str, str], kns: str) -> int:
    """The KafkaTopics and KafkaUsers that are not Ready, with the operator's reason (a
    catalogue has dozens: the Ready ones are only counted)."""
    print("\n== topics and users not Ready")
    proc = subprocess.run([binary, "get", "kafkatopics,kafkausers", "-n", kns, "-o", "json"], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stderr.strip(), file=sys.stderr)
        return proc.returncode
    items = json.loads(proc.stdout)["items"]
    not_ready = []
    for item in items:
        ready = next((c for c in item.get("status", {}).get("conditions", []) if c.get("type") == "Ready"), None)
        if not ready or ready.get("status") != "True":
            why = (ready or {}).get("message") or (ready or {}).get("reason") or "no status yet"
            not_ready.append(f"{item['kind']}/{item['metadata']['name']}: {why}")
    kinds = {k: sum(1 for i in items if i["kind"] == k) for k in ("KafkaTopic", "KafkaUser")}
    print("\n".join(not_ready) if not_ready else
          f"none: {kinds['KafkaTopic']} topics and {kinds['KafkaUser']} users, all Ready")
    return 0


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

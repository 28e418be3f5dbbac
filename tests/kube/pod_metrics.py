"""The metrics of a monitoring pod (the canary's, the lag exporter's) as a Prometheus
would scrape them: from the pod's `metrics` port, through the API server's pod proxy."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families

from kafka_patterns.clients import kafka


def ready_pod(kubectl, namespace: str, component: str) -> dict:
    """The one ready pod of a monitoring Deployment (by its component label)."""
    def ready():
        pods = json.loads(kubectl("get", "pods", "-n", namespace, "-o", "json",
                                  "-l", f"app.kubernetes.io/component={component}", check=True).stdout)["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"
                   and not p["metadata"].get("deletionTimestamp")
                   and all(c.get("ready") for c in p["status"].get("containerStatuses", []))]
        return running[0] if len(running) == 1 else None

    return kafka.wait_until(ready, timeout=300, interval=2, what=f"one ready {component} pod in {namespace}")


def scrape(kubectl, namespace: str, component: str) -> dict[str, float]:
    """The pod's samples, name{labels} -> value, summed over the labels."""
    pod = ready_pod(kubectl, namespace, component)
    port = next(p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", [])
                if p.get("name") == "metrics")
    path = f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}:{port}/proxy/metrics"
    text = kubectl("get", "--raw", path, check=True, retry_until_ok=30).stdout
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            totals[s.name] = totals.get(s.name, 0.0) + s.value
            for key, value in s.labels.items():
                labelled = f"{s.name}{{{key}={value}}}"
                totals[labelled] = totals.get(labelled, 0.0) + s.value
    return totals

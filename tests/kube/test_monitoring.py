"""The canary and the lag exporter as the chart deploys them on the local Kubernetes
(values-local.yaml): one ready pod each; the canary delivers through the cluster and
loses nothing; the lag exporter reports the canary's group. Their metrics are read as
a Prometheus would scrape them, from the pods' `metrics` port (through the API
server's pod proxy)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kafka_patterns import clients, kube

pytestmark = pytest.mark.slow


def ready_pod(component: str):
    """The one ready pod of a monitoring Deployment (by its component label)."""
    cluster = kube.connect()

    def ready():
        pods = cluster.core.list_namespaced_pod(cluster.namespace,
                                                label_selector=f"app.kubernetes.io/component={component}").items
        running = [p for p in pods if p.status.phase == "Running" and not p.metadata.deletion_timestamp
                   and all(c.ready for c in p.status.container_statuses or [])]
        return running[0] if len(running) == 1 else None

    return clients.wait_until(ready, timeout=300, interval=2, what=f"one ready {component} pod (make deploy)")


def scrape(kubectl, component: str) -> dict[str, float]:
    """The pod's samples, name{labels} -> value, summed over the labels."""
    pod = ready_pod(component)
    port = next(p.container_port for c in pod.spec.containers for p in c.ports or [] if p.name == "metrics")
    path = f"/api/v1/namespaces/{pod.metadata.namespace}/pods/{pod.metadata.name}:{port}/proxy/metrics"
    text = kubectl("get", "--raw", path,
                   check=True, retry_until_ok=30).stdout
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            totals[s.name] = totals.get(s.name, 0.0) + s.value
            for key, value in s.labels.items():
                labelled = f"{s.name}{{{key}={value}}}"
                totals[labelled] = totals.get(labelled, 0.0) + s.value
    return totals


def test_the_canary_pod_delivers_through_the_cluster_and_loses_nothing(kubectl):
    samples = clients.wait_until(
        lambda: (m := scrape(kubectl, "canary")).get("kafka_patterns_canary_records_consumed_total", 0) > 0 and m,
        timeout=180, interval=3, what="the canary pod's first consumed probes")
    assert samples["kafka_patterns_canary_records_lost_total"] == 0, samples
    assert samples["kafka_patterns_canary_records_acked_total"] > 0, samples


def test_the_lag_exporter_pod_reports_the_canary_pods_group(kubectl):
    clients.wait_until(
        lambda: scrape(kubectl, "lag-exporter").get("kafka_consumergroup_lag{consumergroup=canary.kube}") is not None,
        timeout=180, interval=3, what="the lag of group canary.kube from the lag-exporter pod")

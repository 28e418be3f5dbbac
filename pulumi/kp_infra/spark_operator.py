"""The kubeflow spark-operator (its Helm chart and CRDs), submitting Spark
applications in the namespaces of our releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s

import pulumi
from kafka_patterns.config.chart_values import merge as deep_merge

SPARK_OPERATOR_REPO = "https://kubeflow.github.io/spark-operator"


def spark_operator_values(job_namespaces: list[pulumi.Input[str]], extra: dict[str, Any] | None = None
                          ) -> dict[str, Any]:
    """The program's values, under the stack's (sparkOperatorValues: the image)."""
    values = {
        # The chart requests nothing, which makes both pods BestEffort: on a node whose
        # Spark JVMs keep the CPUs busy the whole BestEffort group gets 2 CPU shares
        # against the Burstable group's hundreds, the probes (1 s timeout, fixed in the
        # chart) time out and the webhook drops out of its Service ("connection refused"
        # to every admission). A small request makes them Burstable.
        "controller": {"resources": {"requests": {"cpu": "50m", "memory": "256Mi"}}},
        "webhook": {
            "enable": True,
            # Every driver and executor pod goes through the webhook (failurePolicy
            # Fail): a busy node may need more than the chart's 10 s.
            "timeoutSeconds": 30,
            "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}},
        },
        "spark": {
            # The default is ["default"]: without this our applications are ignored.
            "jobNamespaces": job_namespaces,
            # Our chart creates the drivers' ServiceAccount, Role and RoleBinding.
            "serviceAccount": {"create": False},
            "rbac": {"create": False},
        },
    }
    return deep_merge(values, extra or {})


class SparkOperator(pulumi.ComponentResource):
    def __init__(self, name: str, version: str, namespace: pulumi.Input[str],
                 job_namespaces: list[pulumi.Input[str]], chart_dir: Path | None = None,
                 values: dict[str, Any] | None = None, opts: pulumi.ResourceOptions | None = None) -> None:
        """chart_dir: the chart on this machine (the operator's Go module), else the public one."""
        super().__init__("kafka-patterns:index:SparkOperator", name, None, opts)
        source: dict[str, Any] = {"chart": str(chart_dir)} if chart_dir else {
            "chart": "spark-operator", "version": version,
            "repository_opts": k8s.helm.v3.RepositoryOptsArgs(repo=SPARK_OPERATOR_REPO)}
        self.release = k8s.helm.v3.Release(
            name,
            name="spark-operator",
            namespace=namespace,
            values=spark_operator_values(job_namespaces, values),
            atomic=True,
            opts=pulumi.ResourceOptions(parent=self),
            **source,
        )
        self.register_outputs({"status": self.release.status})

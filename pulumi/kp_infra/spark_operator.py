"""The kubeflow spark-operator (its Helm chart and CRDs), submitting Spark
applications in the platform namespace."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

import pulumi

SPARK_OPERATOR_REPO = "https://kubeflow.github.io/spark-operator"


def spark_operator_values(platform_namespace: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "spark": {
            # The default is ["default"]: without this our applications are ignored.
            "jobNamespaces": [platform_namespace],
            # Our chart creates the drivers' ServiceAccount, Role and RoleBinding.
            "serviceAccount": {"create": False},
            "rbac": {"create": False},
        },
    }


class SparkOperator(pulumi.ComponentResource):
    def __init__(self, name: str, version: str, namespace: pulumi.Input[str],
                 platform_namespace: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kafka-patterns:index:SparkOperator", name, None, opts)
        self.release = k8s.helm.v3.Release(
            name,
            name="spark-operator",
            chart="spark-operator",
            version=version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=SPARK_OPERATOR_REPO),
            namespace=namespace,
            values=spark_operator_values(platform_namespace),
            atomic=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"status": self.release.status})

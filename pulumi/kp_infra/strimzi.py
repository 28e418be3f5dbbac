"""The Strimzi cluster operator (its Helm chart, which also installs the CRDs),
watching the platform namespace."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

import pulumi

STRIMZI_CHART = "oci://quay.io/strimzi-helm/strimzi-kafka-operator"


def strimzi_values(platform_namespace: pulumi.Input[str]) -> dict[str, Any]:
    return {
        # Only our namespace: the operator gets RoleBindings there, nothing cluster-wide.
        "watchNamespaces": [platform_namespace],
        "watchAnyNamespace": False,
    }


class StrimziOperator(pulumi.ComponentResource):
    def __init__(self, name: str, version: str, namespace: pulumi.Input[str],
                 platform_namespace: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kafka-patterns:index:StrimziOperator", name, None, opts)
        self.release = k8s.helm.v3.Release(
            name,
            name="strimzi",
            chart=STRIMZI_CHART,
            version=version,
            namespace=namespace,
            values=strimzi_values(platform_namespace),
            # Fail the update rather than leave a half-installed operator behind.
            atomic=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"status": self.release.status})

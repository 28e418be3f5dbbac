"""The Strimzi cluster operator (its Helm chart, which also installs the CRDs),
watching the namespaces of our Strimzi-mode releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s

import pulumi
from kafka_patterns.config.chart_values import merge as deep_merge

STRIMZI_CHART = "oci://quay.io/strimzi-helm/strimzi-kafka-operator"


def strimzi_values(watch: list[pulumi.Input[str]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The program's values, under the stack's (strimziValues: images, requests)."""
    values = {
        # Only our namespaces: the operator gets RoleBindings there, nothing cluster-wide.
        "watchNamespaces": watch,
        "watchAnyNamespace": False,
    }
    return deep_merge(values, extra or {})


class StrimziOperator(pulumi.ComponentResource):
    def __init__(self, name: str, version: str, namespace: pulumi.Input[str], watch: list[pulumi.Input[str]],
                 chart_dir: Path | None = None, values: dict[str, Any] | None = None, release_name: str = "strimzi",
                 opts: pulumi.ResourceOptions | None = None) -> None:
        """chart_dir: the chart on this machine (Strimzi's source release), else the public one."""
        super().__init__("kafka-patterns:index:StrimziOperator", name, None, opts)
        source: dict[str, Any] = ({"chart": str(chart_dir)} if chart_dir
                                  else {"chart": STRIMZI_CHART, "version": version})
        self.release = k8s.helm.v3.Release(
            name,
            name=release_name,
            namespace=namespace,
            values=strimzi_values(watch, values),
            # Fail the update rather than leave a half-installed operator behind.
            atomic=True,
            opts=pulumi.ResourceOptions(parent=self),
            **source,
        )
        self.register_outputs({"status": self.release.status})

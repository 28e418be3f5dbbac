"""Our chart, helm/kafka-patterns, with the catalogue and the pinned versions as
values: Kafka, topics, users, Connect, connectors, Spark applications."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

import pulumi
from kp_infra.settings import CHART_DIR


class PatternsChart(pulumi.ComponentResource):
    def __init__(self, name: str, values: dict[str, Any], namespace: pulumi.Input[str],
                 release_name: str = "patterns", opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kafka-patterns:index:PatternsChart", name, None, opts)
        self.values = values
        self.release = k8s.helm.v3.Release(
            name,
            name=release_name,
            chart=str(CHART_DIR),
            namespace=namespace,
            values=values,
            # The operators reconcile the custom resources; Helm need not wait for them
            # (deploy-k8s.yml waits for Ready with clear messages instead).
            wait_for_jobs=False,
            skip_await=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"status": self.release.status})

"""The namespaces of the stack: one for the operators, one for the platform, and one per
further release of our chart. Kept by `make destroy`: they hold the claims of the data
volumes (and Secrets a user made), which a namespace's deletion would take along."""

from __future__ import annotations

import pulumi_kubernetes as k8s

import pulumi


class Namespaces(pulumi.ComponentResource):
    def __init__(self, name: str, platform: str, operators: str, others: list[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kafka-patterns:index:Namespaces", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, retain_on_delete=True)
        labels = {"app.kubernetes.io/part-of": "kafka-patterns"}
        self.platform = k8s.core.v1.Namespace(
            f"{name}-platform", metadata={"name": platform, "labels": labels}, opts=child)
        # The platform and the operators may share one namespace.
        self.operators = self.platform if operators == platform else k8s.core.v1.Namespace(
            f"{name}-operators", metadata={"name": operators, "labels": labels}, opts=child)
        self.others = [k8s.core.v1.Namespace(f"{name}-{other}", metadata={"name": other, "labels": labels},
                                             opts=child) for other in others or []]
        self.platform_name: pulumi.Output[str] = self.platform.metadata.apply(lambda m: m["name"])
        self.operators_name: pulumi.Output[str] = self.operators.metadata.apply(lambda m: m["name"])
        self.register_outputs({"platform": self.platform_name, "operators": self.operators_name,
                               "others": [o.metadata.apply(lambda m: m["name"]) for o in self.others]})

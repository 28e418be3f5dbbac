"""The Secrets a release of our chart reads and does not create, when the stack brings
its own Kafka and PostgreSQL from this machine (`make up`): the Kafka CA under the name
the values give it, one password Secret per Kafka user the pods log in as (named as
Strimzi's User Operator names a KafkaUser's), and the PostgreSQL passwords in every
release's namespace. The material is what `make up` wrote for the pods
(.run/pods-access/); every value reaches the engine as a secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s

import pulumi
from kafka_patterns.config.names import k8s_name

LABELS = {"app.kubernetes.io/part-of": "kafka-patterns"}


def kafka_users(values: dict[str, Any], catalogue: dict[str, Any]) -> list[str]:
    """The Kafka users whose pods the release runs: every catalogue job, and the canary's
    and the lag exporter's users when they run (lagExporter `auto` runs it on a Kafka the
    stack brings: there is no Strimzi Kafka Exporter)."""
    monitoring = values["monitoring"]
    users = [job["name"] for job in catalogue["jobs"]]
    if monitoring["canary"]["enabled"]:
        users.append(monitoring["canary"]["user"])
    if str(monitoring["lagExporter"]["enabled"]).lower() in {"true", "auto"}:
        users.append(monitoring["lagExporter"]["user"])
    return users


def _read(path: Path, strip: bool = True) -> str:
    """A file's text; a password without its line end, as Ansible's file lookup reads it."""
    if not path.is_file():
        raise pulumi.RunError(f"{path} is missing: run `make up` (it writes {path.parent} for the pods)")
    return path.read_text().rstrip() if strip else path.read_text()


class PodsAccessSecrets(pulumi.ComponentResource):
    def __init__(self, name: str, access_dir: Path, values: dict[str, Any], catalogue: dict[str, Any],
                 namespace: str, postgres_namespaces: list[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        """values: the effective values of the release that brings its own Kafka."""
        super().__init__("kafka-patterns:index:PodsAccessSecrets", name, None, opts)
        # Kept secret in the state and in previews, whatever the provider would do.
        child = pulumi.ResourceOptions(parent=self, additional_secret_outputs=["data", "stringData"])
        self.secrets: list[k8s.core.v1.Secret] = []

        def secret(resource: str, secret_name: str, ns: str, data: dict[str, str],
                   labels: dict[str, str] | None = None) -> None:
            self.secrets.append(k8s.core.v1.Secret(
                resource, type="Opaque",
                metadata={"name": secret_name, "namespace": ns, "labels": {**LABELS, **(labels or {})}},
                string_data={k: pulumi.Output.secret(v) for k, v in data.items()}, opts=child))

        ca = values["kafka"]["external"]["caSecret"]
        if ca["name"]:
            secret(f"{name}-kafka-ca", ca["name"], namespace, {ca["key"]: _read(access_dir / "ca.crt", strip=False)})
        for user in kafka_users(values, catalogue):
            secret(f"{name}-user-{k8s_name(user)}", k8s_name(user), namespace,
                   {"password": _read(access_dir / "users" / f"{user}.password")}, {"kafka-patterns/job": user})
        postgres = values["postgres"]
        for ns in postgres_namespaces:
            for ref, file in ((postgres["appPasswordSecret"], "postgres-app.password"),
                              (postgres["cdcPasswordSecret"], "postgres-cdc.password")):
                secret(f"{name}-{ns}-{ref['name']}", ref["name"], ns, {ref["key"]: _read(access_dir / file)})
        self.register_outputs({"secrets": len(self.secrets)})

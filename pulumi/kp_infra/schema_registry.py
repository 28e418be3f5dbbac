"""The two Secrets the chart's schema registry mounts and does not create: its users
(Quarkus embedded users: digests and roles, never a password) and its TLS certificate,
from the stack's secret config (settings.REGISTRY_SECRET_KEYS)."""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi_kubernetes as k8s

import pulumi

# The users of role schema_registry on the local and hosts paths: user -> roles, and the
# stack config key of each one's password.
USERS = {"registry-admin": "writer,reader", "registry-reader": "reader"}
PASSWORD_KEYS = {"registry-admin": "schemaRegistryAdminPassword", "registry-reader": "schemaRegistryReaderPassword"}
# The realm Apicurio's Quarkus is built with (not configurable at run time).
REALM = "Quarkus"


def digest(user: str, password: str) -> str:
    """Quarkus' digest-md5 entry of an embedded user: HEX(MD5(user:realm:password))."""
    return hashlib.md5(f"{user}:{REALM}:{password}".encode()).hexdigest()


def users_properties(passwords: dict[str, str]) -> str:
    """users.properties as the chart reads it (QUARKUS_CONFIG_LOCATIONS), passwords by user."""
    lines = []
    for user, roles in USERS.items():
        lines.append(f"quarkus.security.users.embedded.users.{user}={digest(user, passwords[user])}")
        lines.append(f"quarkus.security.users.embedded.roles.{user}={roles}")
    return "\n".join(lines) + "\n"


class SchemaRegistrySecrets(pulumi.ComponentResource):
    def __init__(self, name: str, secrets: dict[str, pulumi.Output[str]], values: dict[str, Any],
                 namespace: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None) -> None:
        """secrets: settings.registry_secrets; values: the chart's effective schemaRegistry block."""
        super().__init__("kafka-patterns:index:SchemaRegistrySecrets", name, None, opts)
        # Kept secret in the state and in previews, whatever the provider would do.
        child = pulumi.ResourceOptions(parent=self, additional_secret_outputs=["data", "stringData"])
        labels = {"app.kubernetes.io/part-of": "kafka-patterns", "app.kubernetes.io/component": "schema-registry"}
        passwords = pulumi.Output.all(**{user: secrets[key] for user, key in PASSWORD_KEYS.items()})
        users = values["users"]
        self.users = k8s.core.v1.Secret(
            f"{name}-users",
            metadata={"name": users["secret"], "namespace": namespace, "labels": labels},
            type="Opaque",
            string_data={users["key"]: pulumi.Output.secret(passwords.apply(users_properties))},
            opts=child)
        self.tls = k8s.core.v1.Secret(
            f"{name}-tls",
            metadata={"name": values["tls"]["secret"], "namespace": namespace, "labels": labels},
            type="kubernetes.io/tls",
            string_data={"tls.crt": secrets["schemaRegistryTlsCert"], "tls.key": secrets["schemaRegistryTlsKey"]},
            opts=child)
        self.register_outputs({"users_secret": users["secret"], "tls_secret": values["tls"]["secret"]})

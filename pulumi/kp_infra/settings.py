"""Stack settings: the typed stack config plus the files everything derives from
(ansible/versions.yml, spark-jobs/catalogue.yaml, the chart's values files)."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import pulumi

ROOT = Path(__file__).resolve().parents[2]
VERSIONS_FILE = ROOT / "ansible" / "versions.yml"
CATALOGUE_FILE = ROOT / "spark-jobs" / "catalogue.yaml"
CHART_DIR = ROOT / "helm" / "kafka-patterns"
# Secret stack config of the schema registry (`pulumi config set --secret <key> ...`),
# required while the chart's registry is enabled: key -> what its value must look like.
REGISTRY_SECRET_KEYS = {
    "schemaRegistryAdminPassword": "the password of registry-admin (roles writer, reader)",
    "schemaRegistryReaderPassword": "the password of registry-reader (role reader)",
    "schemaRegistryTlsCert": "a PEM certificate (-----BEGIN CERTIFICATE-----) for the registry Service's DNS name",
    "schemaRegistryTlsKey": "its PEM private key (-----BEGIN ... PRIVATE KEY-----)",
}


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of values files: mappings merge key by key, the rest is replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (the Kubernetes path reads it)")
    return yaml.safe_load(path.read_text()) or {}


@dataclass(frozen=True)
class Settings:
    namespace: str
    operator_namespace: str
    values_file: Path
    versions: dict[str, Any]
    catalogue: dict[str, Any]
    spark_image_repository: str = ""
    connect_build_image: str = ""
    # False: the chart renders no schema registry (the user runs their own).
    schema_registry: bool = True
    # REGISTRY_SECRET_KEYS -> their values, secret Outputs; empty when the registry is off.
    registry_secrets: dict[str, pulumi.Output[str]] = dataclasses.field(default_factory=dict)

    @property
    def chart_overrides(self) -> dict[str, Any]:
        """The stack's registry settings, as chart values (only those that are set)."""
        out: dict[str, Any] = {}
        if self.spark_image_repository:
            out["spark"] = {"image": {"repository": self.spark_image_repository}}
        if self.connect_build_image:
            out["connect"] = {"build": {"image": self.connect_build_image}}
        if not self.schema_registry:
            out["schemaRegistry"] = {"enabled": False}
        return out

    @property
    def chart_values(self) -> dict[str, Any]:
        """What `make render` passes with -f, in the same order: versions, catalogue,
        the stack's values file, then the stack's overrides."""
        values: dict[str, Any] = {}
        for layer in (self.versions, self.catalogue, _yaml(self.values_file), self.chart_overrides):
            values = deep_merge(values, layer)
        return values

    @property
    def effective_values(self) -> dict[str, Any]:
        """The values the chart's templates see: its values.yaml under chart_values."""
        return deep_merge(_yaml(CHART_DIR / "values.yaml"), self.chart_values)

    @property
    def cluster_name(self) -> str:
        values = self.effective_values
        return values["kafka"]["clusterName"] or values["cluster"]["name"]

    @property
    def connect_name(self) -> str:
        return f"{self.cluster_name}-connect"

    @property
    def bootstrap_address(self) -> str:
        # Same as the chart's kp.bootstrap: the TLS listener's bootstrap Service.
        port = self.effective_values["kafka"]["listener"]["port"]
        return f"{self.cluster_name}-kafka-bootstrap.{self.namespace}.svc:{port}"

    @property
    def connect_rest_url(self) -> str:
        # Strimzi names the REST Service <KafkaConnect name>-connect-api.
        return f"http://{self.connect_name}-connect-api.{self.namespace}.svc:8083"

    @property
    def schema_registry_enabled(self) -> bool:
        return bool(self.effective_values["schemaRegistry"]["enabled"])

    @property
    def postgres_secrets(self) -> list[str]:
        """Secrets the jobs (and Connect) read PostgreSQL passwords from: the chart does
        not install PostgreSQL, they must exist in the namespace."""
        values = self.effective_values
        refs = [values["postgres"]["appPasswordSecret"]]
        if values["connect"]["enabled"]:
            refs.append(values["postgres"]["cdcPasswordSecret"])
        return sorted({r["name"] for r in refs})


def _looks_right(key: str, value: str) -> bool:
    if key == "schemaRegistryTlsCert":
        return "-----BEGIN CERTIFICATE-----" in value
    if key == "schemaRegistryTlsKey":
        return "PRIVATE KEY-----" in value
    return bool(value.strip())


def registry_secrets(cfg: pulumi.Config) -> dict[str, pulumi.Output[str]]:
    """The schema registry's secret config, checked now (a missing or malformed key stops
    the program before anything is created) and kept secret from then on."""
    found: dict[str, pulumi.Output[str]] = {}
    for key, what in REGISTRY_SECRET_KEYS.items():
        value = cfg.get(key)
        if value is None or not _looks_right(key, value):
            state = "is not set" if value is None else "does not hold " + what
            raise pulumi.RunError(
                f"stack config {cfg.full_key(key)} {state}: the chart's schema registry is enabled and needs "
                f"{what}. Set it with `pulumi config set --secret {key} <value>` (PEM: pipe the file in), "
                f"or run your own registry: `pulumi config set schemaRegistryEnabled false`.")
        found[key] = pulumi.Output.secret(value)
    return found


def load(config: pulumi.Config | None = None) -> Settings:
    cfg = config or pulumi.Config()
    values_file = CHART_DIR / cfg.require("valuesFile")
    settings = Settings(
        namespace=cfg.require("namespace"),
        operator_namespace=cfg.require("operatorNamespace"),
        values_file=values_file,
        versions=_yaml(VERSIONS_FILE),
        catalogue=_yaml(CATALOGUE_FILE),
        spark_image_repository=cfg.get("sparkImageRepository") or "",
        connect_build_image=cfg.get("connectBuildImage") or "",
        schema_registry=cfg.get_bool("schemaRegistryEnabled", True),
    )
    if settings.schema_registry_enabled:
        settings = dataclasses.replace(settings, registry_secrets=registry_secrets(cfg))
    return settings

"""Stack settings: the typed stack config plus the files everything derives from
(ansible/versions.yml, spark-jobs/catalogue.yaml, the chart's values files)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import pulumi

ROOT = Path(__file__).resolve().parents[2]
VERSIONS_FILE = ROOT / "ansible" / "versions.yml"
CATALOGUE_FILE = ROOT / "spark-jobs" / "catalogue.yaml"
CHART_DIR = ROOT / "helm" / "kafka-patterns"


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

    @property
    def chart_overrides(self) -> dict[str, Any]:
        """The stack's registry settings, as chart values (only those that are set)."""
        out: dict[str, Any] = {}
        if self.spark_image_repository:
            out["spark"] = {"image": {"repository": self.spark_image_repository}}
        if self.connect_build_image:
            out["connect"] = {"build": {"image": self.connect_build_image}}
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
    def postgres_secrets(self) -> list[str]:
        """Secrets the jobs (and Connect) read PostgreSQL passwords from: the chart does
        not install PostgreSQL, they must exist in the namespace."""
        values = self.effective_values
        refs = [values["postgres"]["appPasswordSecret"]]
        if values["connect"]["enabled"]:
            refs.append(values["postgres"]["cdcPasswordSecret"])
        return sorted({r["name"] for r in refs})


def load(config: pulumi.Config | None = None) -> Settings:
    cfg = config or pulumi.Config()
    values_file = CHART_DIR / cfg.require("valuesFile")
    return Settings(
        namespace=cfg.require("namespace"),
        operator_namespace=cfg.require("operatorNamespace"),
        values_file=values_file,
        versions=_yaml(VERSIONS_FILE),
        catalogue=_yaml(CATALOGUE_FILE),
        spark_image_repository=cfg.get("sparkImageRepository") or "",
        connect_build_image=cfg.get("connectBuildImage") or "",
    )

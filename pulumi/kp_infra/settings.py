"""Stack settings: the typed stack config plus the files everything derives from
(catalogue/versions.yml, catalogue/catalogue.yaml, the chart's values files).

A stack differs from another only here, in its config: where the operators' charts come
from (a public repository, or a path on this machine), their extra values, and, for a
stack on this machine (`local`), the directories its Secrets, volumes and image keys are
read from."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

import pulumi
from kafka_patterns.config import chart_values, names
from kafka_patterns.config.catalogue import CATALOGUE_FILE, ROOT, VERSIONS_FILE
from kafka_patterns.config.chart_values import CHART_DIR

PULUMI_DIR = ROOT / "pulumi"
PROJECT = "kafka-patterns"
# Secret stack config of the schema registry (`pulumi config set --secret <key> ...`),
# required while the chart's registry is enabled: key -> what its value must look like.
REGISTRY_SECRET_KEYS = {
    "schemaRegistryAdminPassword": "the password of registry-admin (roles writer, reader)",
    "schemaRegistryReaderPassword": "the password of registry-reader (role reader)",
    "schemaRegistryTlsCert": "a PEM certificate (-----BEGIN CERTIFICATE-----) for the registry Service's DNS name",
    "schemaRegistryTlsKey": "its PEM private key (-----BEGIN ... PRIVATE KEY-----)",
}


class Config(Protocol):
    """What settings read of a stack's config: pulumi.Config, or StackFile outside the engine."""

    def get(self, key: str) -> str | None: ...
    def get_bool(self, key: str, default: bool | None = None) -> bool | None: ...
    def get_object(self, key: str, default: Any = None) -> Any: ...
    def require(self, key: str) -> str: ...
    def full_key(self, key: str) -> str: ...


class StackFile:
    """A stack's config read from Pulumi.yaml (declared defaults) and Pulumi.<stack>.yaml,
    for the tools that run outside the engine (Ansible's volume directories, kube_stack)."""

    def __init__(self, stack: str, pulumi_dir: Path = PULUMI_DIR) -> None:
        path = pulumi_dir / f"Pulumi.{stack}.yaml"
        if not path.is_file():
            known = sorted(p.stem.removeprefix("Pulumi.") for p in pulumi_dir.glob("Pulumi.*.yaml"))
            raise SystemExit(f"unknown stack {stack!r}: expected one of {', '.join(known)}")
        declared = (yaml.safe_load((pulumi_dir / "Pulumi.yaml").read_text()) or {}).get("config", {})
        self.values = {k: v["default"] for k, v in declared.items() if "default" in v}
        for key, value in ((yaml.safe_load(path.read_text()) or {}).get("config") or {}).items():
            self.values[key.removeprefix(f"{PROJECT}:")] = value

    def get(self, key: str) -> str | None:
        value = self.values.get(key)
        return None if value is None else str(value)

    def get_bool(self, key: str, default: bool | None = None) -> bool | None:
        value = self.values.get(key, default)
        return value if isinstance(value, bool) or value is None else str(value).lower() == "true"

    def get_object(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def require(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise SystemExit(f"stack config {self.full_key(key)} is not set")
        return value

    def full_key(self, key: str) -> str:
        return f"{PROJECT}:{key}"


# Helm's merge of values layers (the operators' charts' values too).
deep_merge = chart_values.merge


_yaml = chart_values.read


def user_cache() -> Path:
    """The user-level cache of the project's builds (role go_build's, kube_binaries')."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-patterns"


def expand_path(template: str, versions: dict[str, Any]) -> Path:
    """A path of the stack config: {cache} is the user-level cache, {<pin>} a pin of
    versions.yml; relative paths are the checkout's."""
    path = Path(template.format(cache=user_cache(), **versions))
    return path if path.is_absolute() else ROOT / path


@functools.cache
def chart_digest(chart_dir: Path = CHART_DIR) -> str:
    """A digest of every file of a chart: helm upgrades a release of a local chart only
    when its values or its version change, and ours stays 0.1.0, so the digest, passed
    as a value, makes any change of a template a change of the release."""
    digest = hashlib.sha256()
    for path in sorted(p for p in chart_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(chart_dir).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class ReleaseSettings:
    """One release of our chart: its namespace, values file and the stack's overrides."""

    namespace: str
    values_file: Path
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict)


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
    # The operators' charts as directories on this machine (None: their public
    # repositories), and values over the program's.
    strimzi_chart_dir: Path | None = None
    spark_operator_chart_dir: Path | None = None
    strimzi_values: dict[str, Any] = dataclasses.field(default_factory=dict)
    spark_operator_values: dict[str, Any] = dataclasses.field(default_factory=dict)
    strimzi_release_name: str = "strimzi"
    # A stack on this machine: the Kafka CA, users' and PostgreSQL passwords and bootstrap
    # `make up` wrote for the pods (None: the Secrets are the user's).
    pods_access_dir: Path | None = None
    # hostPath PersistentVolumes under this directory for the claims of our releases
    # (None: the cluster provisions volumes).
    volumes_dir: Path | None = None
    # The keys of the images `make image` built (build/kube-images.json): a changed image
    # of the same tag rolls its pods.
    image_inputs_file: Path | None = None
    # A second release of our chart, in Strimzi mode, in a namespace of its own.
    strimzi_mode: ReleaseSettings | None = None

    @property
    def chart_overrides(self) -> dict[str, Any]:
        """The stack's own settings, as chart values (only those that are set)."""
        out: dict[str, Any] = {"global": {"kafkaPatternsChartDigest": chart_digest()}}
        if self.spark_image_repository:
            out["spark"] = {"image": {"repository": self.spark_image_repository}}
        if self.connect_build_image:
            out["connect"] = {"build": {"image": self.connect_build_image}}
        if not self.schema_registry:
            out["schemaRegistry"] = {"enabled": False}
        if self.pods_access_dir is not None:
            out["kafka"] = {"external": {"bootstrap": self.pods_access("bootstrap").strip()}}
        return out

    def layered(self, values_file: Path, overrides: dict[str, Any]) -> dict[str, Any]:
        """What `make render` passes with -f, in the same order: versions, catalogue,
        a values file, then the stack's overrides."""
        return chart_values.merge_all([self.versions, self.catalogue, _yaml(values_file), overrides])

    @property
    def chart_values(self) -> dict[str, Any]:
        return self.layered(self.values_file, self.chart_overrides)

    @property
    def effective_values(self) -> dict[str, Any]:
        """The values the chart's templates see: its values.yaml under chart_values."""
        return deep_merge(_yaml(chart_values.CHART_DEFAULTS), self.chart_values)

    @property
    def releases(self) -> list[ReleaseSettings]:
        """Our chart's releases: the stack's, then the Strimzi-mode one if any."""
        main = ReleaseSettings(self.namespace, self.values_file, self.chart_overrides)
        return [main] + ([self.strimzi_mode] if self.strimzi_mode else [])

    def release_values(self, release: ReleaseSettings) -> dict[str, Any]:
        return self.layered(release.values_file, release.overrides)

    def release_effective_values(self, release: ReleaseSettings) -> dict[str, Any]:
        return deep_merge(_yaml(chart_values.CHART_DEFAULTS), self.release_values(release))

    @property
    def job_namespaces(self) -> list[str]:
        """Where the spark-operator runs applications: every release's namespace."""
        return [r.namespace for r in self.releases]

    def pods_access(self, name: str) -> str:
        """A file `make up` wrote for the pods, read now (a missing one names the fix)."""
        assert self.pods_access_dir is not None
        path = self.pods_access_dir / name
        if not path.is_file():
            raise pulumi.RunError(f"{path} is missing: run `make up` (it writes {self.pods_access_dir} for the pods)")
        return path.read_text()

    @property
    def image_inputs(self) -> dict[str, str]:
        """Image name -> the key of its inputs, from `make image`'s build/kube-images.json."""
        if self.image_inputs_file is None or not self.image_inputs_file.is_file():
            return {}
        return {i["name"]: i["key"] for i in json.loads(self.image_inputs_file.read_text())}

    @property
    def cluster_name(self) -> str:
        return names.cluster_name(self.effective_values)

    @property
    def connect_name(self) -> str:
        return names.connect_name(self.effective_values)

    @property
    def bootstrap_address(self) -> str:
        values = self.effective_values
        if values["kafka"]["external"]["enabled"]:
            return values["kafka"]["external"]["bootstrap"]
        # Same as the chart's kp.bootstrap: the TLS listener's bootstrap Service.
        port = values["kafka"]["listener"]["port"]
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


def registry_secrets(cfg: Config, versions: dict[str, Any]) -> dict[str, pulumi.Output[str]]:
    """The schema registry's secret config, checked now (a missing or malformed key stops
    the program before anything is created) and kept secret from then on. A stack on this
    machine names files instead (schemaRegistrySecretFiles: key -> path)."""
    files = cfg.get_object("schemaRegistrySecretFiles") or {}
    found: dict[str, pulumi.Output[str]] = {}
    for key, what in REGISTRY_SECRET_KEYS.items():
        if key in files:
            path = expand_path(files[key], versions)
            if not path.is_file():
                raise pulumi.RunError(f"{path} is missing (stack config {cfg.full_key('schemaRegistrySecretFiles')}"
                                      f".{key}, {what}): run `make up`, or `make deploy` issues it")
            value: str | None = path.read_text().strip() + ("\n" if "PEM" in what or "PRIVATE" in what else "")
        else:
            value = cfg.get(key)
        if value is None or not _looks_right(key, value):
            state = "is not set" if value is None else "does not hold " + what
            raise pulumi.RunError(
                f"stack config {cfg.full_key(key)} {state}: the chart's schema registry is enabled and needs "
                f"{what}. Set it with `pulumi config set --secret {key} <value>` (PEM: pipe the file in), "
                f"or run your own registry: `pulumi config set schemaRegistryEnabled false`.")
        found[key] = pulumi.Output.secret(value)
    return found


def strimzi_mode_overrides(paused: bool) -> dict[str, Any]:
    """The Strimzi-mode release's overrides. Paused: its Kafka is created with
    reconciliation paused, so that the deploy can give it the cluster id of kept volumes
    before the operator makes a new one (Strimzi's recovery of a deleted cluster)."""
    out: dict[str, Any] = {"global": {"kafkaPatternsChartDigest": chart_digest()}}
    if paused:
        out["kafka"] = {"annotations": {"strimzi.io/pause-reconciliation": "true"}}
    return out


def with_pins(value: Any, versions: dict[str, Any]) -> Any:
    """Stack config values with {<pin>} in their strings replaced by catalogue/versions.yml's
    pins: a version is typed once."""
    if isinstance(value, dict):
        return {k: with_pins(v, versions) for k, v in value.items()}
    if isinstance(value, list):
        return [with_pins(v, versions) for v in value]
    return value.format(**versions) if isinstance(value, str) and "{" in value else value


def _optional_path(cfg: Config, key: str, versions: dict[str, Any]) -> Path | None:
    value = cfg.get(key)
    return expand_path(value, versions) if value else None


def load(config: Config | None = None, with_secrets: bool = True) -> Settings:
    cfg = config or pulumi.Config()
    versions = _yaml(VERSIONS_FILE)
    strimzi_mode = cfg.get_object("strimziRelease")
    settings = Settings(
        namespace=cfg.require("namespace"),
        operator_namespace=cfg.require("operatorNamespace"),
        values_file=CHART_DIR / cfg.require("valuesFile"),
        versions=versions,
        catalogue=_yaml(CATALOGUE_FILE),
        spark_image_repository=cfg.get("sparkImageRepository") or "",
        connect_build_image=cfg.get("connectBuildImage") or "",
        schema_registry=bool(cfg.get_bool("schemaRegistryEnabled", True)),
        strimzi_chart_dir=_optional_path(cfg, "strimziChart", versions),
        spark_operator_chart_dir=_optional_path(cfg, "sparkOperatorChart", versions),
        strimzi_values=with_pins(cfg.get_object("strimziValues") or {}, versions),
        spark_operator_values=with_pins(cfg.get_object("sparkOperatorValues") or {}, versions),
        strimzi_release_name=cfg.get("strimziReleaseName") or "strimzi",
        pods_access_dir=_optional_path(cfg, "podsAccessDir", versions),
        volumes_dir=_optional_path(cfg, "volumesDir", versions),
        image_inputs_file=_optional_path(cfg, "imageInputsFile", versions),
        strimzi_mode=ReleaseSettings(
            namespace=strimzi_mode["namespace"], values_file=CHART_DIR / strimzi_mode["valuesFile"],
            overrides=strimzi_mode_overrides(bool(cfg.get_bool("strimziReconciliationPaused", False))),
        ) if strimzi_mode else None,
    )
    if with_secrets and settings.schema_registry_enabled:
        settings = dataclasses.replace(settings, registry_secrets=registry_secrets(cfg, versions))
    return settings

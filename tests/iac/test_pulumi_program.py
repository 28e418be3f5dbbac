"""The Pulumi program (pulumi/__main__.py) run against pulumi.runtime.set_mocks for each
stack config: no CLI, no cluster. Asserts on what it would ask the engine to create
(resource inputs) and on the stack outputs."""

from __future__ import annotations

import hashlib
import json
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from manifests import ROOT, k8s_name
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor

import pulumi
from kafka_patterns.config.catalogue import VERSIONS_FILE

PULUMI_DIR = ROOT / "pulumi"
PROJECT = yaml.safe_load((PULUMI_DIR / "Pulumi.yaml").read_text())["name"]
STACKS = sorted(p.stem.removeprefix("Pulumi.") for p in PULUMI_DIR.glob("Pulumi.*.yaml"))
# Stacks whose operators' charts come from their public repositories, and the one on this
# machine (local charts, Secrets and volumes from `make up`'s files).
LOCAL_STACK = "local"
REMOTE_STACKS = [s for s in STACKS if s != LOCAL_STACK]
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
SECRET = "kubernetes:core/v1:Secret"
# Component name -> type: namespaces, each operator, the registry's Secrets, our chart.
COMPONENTS = {"namespaces": "Namespaces", "strimzi": "StrimziOperator", "spark-operator": "SparkOperator",
              "schema-registry": "SchemaRegistrySecrets", "patterns": "PatternsChart"}
# What `pulumi config set --secret` would hold (test values, not a real key pair).
CERT = "-----BEGIN CERTIFICATE-----\nMIIBtestcert\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEtestkey\n-----END PRIVATE KEY-----\n"
REGISTRY_SECRETS = {"schemaRegistryAdminPassword": "admin-pw-4d1f", "schemaRegistryReaderPassword": "reader-pw-9c2e",
                    "schemaRegistryTlsCert": CERT, "schemaRegistryTlsKey": KEY}


class RecordingMocks(pulumi.runtime.Mocks):
    """Every resource becomes its inputs; every registration is kept for the asserts."""

    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.resources.append(args)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list | None]:
        return {}, None


class RecordingMonitor(MockMonitor):
    """Keeps each registration request too: its dependencies and which inputs are secret."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.requests: dict[str, Any] = {}

    def RegisterResource(self, request):  # the gRPC method, hence the name
        self.requests[self.make_urn(request.parent, request.type, request.name)] = request
        return super().RegisterResource(request)


@dataclass
class Run:
    stack: str
    config: dict[str, Any]
    resources: list[pulumi.runtime.MockResourceArgs]
    urns: list[str]
    outputs: dict[str, Any]
    requests: dict[str, Any]

    def of_type(self, typ: str) -> list[pulumi.runtime.MockResourceArgs]:
        return [r for r in self.resources if r.typ == typ]

    def release(self, name: str) -> dict[str, Any]:
        found = [r.inputs for r in self.of_type(RELEASE) if r.inputs.get("name") == name]
        assert len(found) == 1, f"expected one Helm release named {name}, found {len(found)}"
        return found[0]


def stack_config(stack: str) -> dict[str, Any]:
    """Pulumi.<stack>.yaml with the project's declared defaults, as the CLI passes it."""
    project = yaml.safe_load((PULUMI_DIR / "Pulumi.yaml").read_text()).get("config", {})
    config = {f"{PROJECT}:{k}": v["default"] for k, v in project.items() if "default" in v}
    config.update(yaml.safe_load((PULUMI_DIR / f"Pulumi.{stack}.yaml").read_text())["config"])
    return config


def run_program(stack: str, config: dict[str, Any]) -> Run:
    sys.path.insert(0, str(PULUMI_DIR))
    try:
        from kp_infra import webhook
    finally:
        sys.path.remove(str(PULUMI_DIR))
    # No API server here: the webhook admits at once (tests/kube waits for the real one).
    webhook._admitted = lambda namespace, spark_version: None
    mocks = RecordingMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config({k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()})
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test
    def program():
        runpy.run_path(str(PULUMI_DIR / "__main__.py"), run_name="__main__")
        exported = pulumi.runtime.get_root_resource().outputs
        return pulumi.Output.all(**exported).apply(outputs.update)

    sys.path.insert(0, str(PULUMI_DIR))
    try:
        program()
    finally:
        sys.path.remove(str(PULUMI_DIR))
    return Run(stack, config, mocks.resources, list(monitor.resources), outputs, monitor.requests)


def local_files(root: Path, cat: dict[str, Any]) -> dict[str, Any]:
    """What `make up` would have written for the pods, as the local stack reads it, and the
    stack config that points at it."""
    access = root / "pods-access"
    (access / "users").mkdir(parents=True)
    (access / "ca.crt").write_text(CERT)
    (access / "bootstrap").write_text(BOOTSTRAP + "\n")
    users = [job["name"] for job in cat["jobs"]] + ["canary", "operator"]
    for user in users:
        (access / "users" / f"{user}.password").write_text(user_password(user) + "\n")
    for name in ("app", "cdc"):
        (access / f"postgres-{name}.password").write_text(f"pg-{name}-secret-77\n")
    registry = {"schemaRegistryAdminPassword": "admin-pw-4d1f", "schemaRegistryReaderPassword": "reader-pw-9c2e",
                "schemaRegistryTlsCert": CERT, "schemaRegistryTlsKey": KEY}
    for key, value in registry.items():
        (root / key).write_text(value)
    (root / "kube-images.json").write_text(json.dumps([{"name": "strimzi-operator", "key": "k3y"}]))
    return {f"{PROJECT}:podsAccessDir": str(access), f"{PROJECT}:volumesDir": str(root / "volumes"),
            f"{PROJECT}:imageInputsFile": str(root / "kube-images.json"),
            f"{PROJECT}:schemaRegistrySecretFiles": {k: str(root / k) for k in registry}}


def user_password(user: str) -> str:
    return f"pw-{user}-5e1"


BOOTSTRAP = "198.51.100.1:11094,198.51.100.1:12094"


def stack_run(stack: str, tmp_root: Path, cat: dict[str, Any]) -> Run:
    config = stack_config(stack)
    if stack == LOCAL_STACK:
        config.update(local_files(tmp_root / stack, cat))
    else:
        config.update({f"{PROJECT}:{k}": v for k, v in REGISTRY_SECRETS.items()})
    return run_program(stack, config)


@pytest.fixture(scope="module", params=STACKS)
def any_run(request, tmp_path_factory, cat) -> Run:
    return stack_run(request.param, tmp_path_factory.mktemp("stack"), cat)


@pytest.fixture(scope="module", params=REMOTE_STACKS)
def run(request, tmp_path_factory, cat) -> Run:
    return stack_run(request.param, tmp_path_factory.mktemp("stack"), cat)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, cat) -> Run:
    return stack_run(LOCAL_STACK, tmp_path_factory.mktemp("stack"), cat)


@pytest.fixture(scope="module")
def pins() -> dict[str, Any]:
    return yaml.safe_load(VERSIONS_FILE.read_text())


def test_one_component_per_concern(run):
    # A child's URN carries its parents' types: ...::<parent type>$<type>::<name>.
    children: dict[str, set[tuple[str, str]]] = {}
    for urn in run.urns:
        *_, types, name = urn.split("::")
        chain = types.split("$")
        if len(chain) > 1:
            children.setdefault(chain[-2], set()).add((chain[-1], name))
    component = {name: f"{PROJECT}:index:{typ}" for name, typ in COMPONENTS.items()}
    namespaces = {"namespaces-platform", "namespaces-operators"}
    if run.config[f"{PROJECT}:namespace"] == run.config[f"{PROJECT}:operatorNamespace"]:
        namespaces = {"namespaces-platform"}
    assert children == {
        "pulumi:pulumi:Stack": {(typ, name) for name, typ in component.items()},
        component["namespaces"]: {(NAMESPACE, n) for n in namespaces},
        component["strimzi"]: {(RELEASE, "strimzi")},
        component["spark-operator"]: {(RELEASE, "spark-operator")},
        component["schema-registry"]: {(SECRET, "schema-registry-users"), (SECRET, "schema-registry-tls")},
        component["patterns"]: {(RELEASE, "patterns")},
    }


def test_strimzi_is_the_pinned_1_2_0_chart_watching_our_namespace(run, pins):
    strimzi = run.release("strimzi")
    assert pins["strimzi_version"] == "1.2.0"
    assert strimzi["version"] == pins["strimzi_version"]
    assert strimzi["chart"] == "oci://quay.io/strimzi-helm/strimzi-kafka-operator"
    assert strimzi["namespace"] == run.config[f"{PROJECT}:operatorNamespace"]
    assert run.config[f"{PROJECT}:namespace"] in strimzi["values"]["watchNamespaces"]
    assert strimzi["values"]["watchAnyNamespace"] is False


def test_spark_operator_is_the_pinned_2_5_2_chart_with_our_job_namespace(run, pins):
    spark = run.release("spark-operator")
    assert pins["spark_operator_version"] == "2.5.2"
    assert spark["version"] == pins["spark_operator_version"]
    assert spark["chart"] == "spark-operator"
    assert spark["repositoryOpts"]["repo"] == "https://kubeflow.github.io/spark-operator"
    assert spark["namespace"] == run.config[f"{PROJECT}:operatorNamespace"]
    assert run.config[f"{PROJECT}:namespace"] in spark["values"]["spark"]["jobNamespaces"]


def test_the_stack_creates_its_namespaces(run):
    names = {r.inputs["metadata"]["name"] for r in run.of_type(NAMESPACE)}
    assert names == {run.config[f"{PROJECT}:namespace"], run.config[f"{PROJECT}:operatorNamespace"]}


def test_our_chart_gets_every_catalogue_topic_job_and_connector(run, cat, pins):
    chart = run.release("patterns")
    assert chart["chart"] == str(ROOT / "helm" / "kafka-patterns")
    assert chart["namespace"] == run.config[f"{PROJECT}:namespace"]
    values = chart["values"]
    assert values["topics"] == cat["topics"]
    assert values["jobs"] == cat["jobs"]
    assert values["connectors"] == cat["connectors"]
    for key in ("kafka_version", "spark_version", "debezium_version", "debezium_jdbc_version"):
        assert values[key] == pins[key]


def test_our_chart_gets_the_guarantee_settings_and_the_stack_values_file(run):
    values = run.release("patterns")["values"]
    assert values["cluster"]["replicationFactor"] == 3
    assert values["cluster"]["minInsyncReplicas"] == 2
    stack_values = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / run.config[f"{PROJECT}:valuesFile"]).read_text())
    assert values["kafka"]["brokers"]["storage"] == stack_values["kafka"]["brokers"]["storage"]


def test_the_stack_outputs_name_the_bootstrap_connect_and_namespace(run, cat):
    ns = run.config[f"{PROJECT}:namespace"]
    cluster = cat["cluster"]["name"]
    assert run.outputs["namespace"] == ns
    assert run.outputs["cluster_name"] == cluster
    assert run.outputs["bootstrap_address"] == f"{cluster}-kafka-bootstrap.{ns}.svc:9093"
    assert run.outputs["connect_name"] == f"{cluster}-connect"
    assert run.outputs["connect_rest"] == f"http://{cluster}-connect-connect-api.{ns}.svc:8083"
    # PostgreSQL is not part of the chart: deploy-k8s.yml checks these Secrets exist.
    pg = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values.yaml").read_text())["postgres"]
    assert run.outputs["postgres_host"] == pg["host"]
    assert run.outputs["postgres_secrets"] == sorted({pg["appPasswordSecret"]["name"], pg["cdcPasswordSecret"]["name"]})


def test_the_bootstrap_output_is_what_the_chart_gives_the_jobs(run, helm):
    from manifests import render_tool

    ns = run.config[f"{PROJECT}:namespace"]
    values = render_tool.CHART_DIR / run.config[f"{PROJECT}:valuesFile"]
    objects = render_tool.render(values, ns, helm)
    app = next(o for o in objects if o["kind"] == "SparkApplication")
    env = {e["name"]: e.get("value") for e in app["spec"]["driver"]["env"]}
    assert env["KAFKA_BOOTSTRAP_SERVERS"] == run.outputs["bootstrap_address"]


def test_registry_settings_override_the_values_file(cat):
    sys.path.insert(0, str(PULUMI_DIR))
    try:
        from kp_infra.settings import CHART_DIR, Settings
    finally:
        sys.path.remove(str(PULUMI_DIR))
    settings = Settings(namespace="n", operator_namespace="o", values_file=CHART_DIR / "values-prod.yaml",
                        versions={}, catalogue=cat, spark_image_repository="reg.example/spark",
                        connect_build_image="reg.example/connect:1")
    assert settings.chart_values["spark"]["image"]["repository"] == "reg.example/spark"
    assert settings.chart_values["connect"]["build"]["image"] == "reg.example/connect:1"
    assert settings.chart_values["spark"]["driver"]["memory"] == "2g", "the rest of the values file stays"


def registry_values() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values.yaml").read_text())["schemaRegistry"]


def secret_named(run: Run, name: str) -> tuple[str, dict[str, Any]]:
    """The URN and inputs of the Secret resource `name`, its stringData unwrapped: it must
    reach the engine marked secret (the envelope the mocks keep)."""
    urns = [urn for urn in run.urns if urn.endswith(f"::{name}") and SECRET in urn]
    assert len(urns) == 1, f"expected one Secret resource {name}, found {len(urns)}"
    inputs = dict(next(r.inputs for r in run.of_type(SECRET) if r.name == name))
    envelope = inputs["stringData"]
    assert envelope.get(rpc._special_sig_key) == rpc._special_secret_sig, f"{name}: stringData is not secret"
    inputs["stringData"] = envelope["value"]
    return urns[0], inputs


def test_the_registry_users_secret_holds_digests_and_roles_never_a_password(run):
    values = registry_values()
    _, inputs = secret_named(run, "schema-registry-users")
    assert inputs["metadata"]["name"] == values["users"]["secret"]
    assert inputs["metadata"]["namespace"] == run.config[f"{PROJECT}:namespace"]
    properties = inputs["stringData"][values["users"]["key"]]

    def md5(text: str) -> str:
        return hashlib.md5(text.encode()).hexdigest()

    admin, reader = REGISTRY_SECRETS["schemaRegistryAdminPassword"], REGISTRY_SECRETS["schemaRegistryReaderPassword"]
    # As role schema_registry writes them: HEX(MD5(user:Quarkus:password)).
    assert properties.splitlines() == [
        f"quarkus.security.users.embedded.users.registry-admin={md5('registry-admin:Quarkus:' + admin)}",
        "quarkus.security.users.embedded.roles.registry-admin=writer,reader",
        f"quarkus.security.users.embedded.users.registry-reader={md5('registry-reader:Quarkus:' + reader)}",
        "quarkus.security.users.embedded.roles.registry-reader=reader",
    ]
    everything = json.dumps([r.inputs for r in run.resources]) + json.dumps(run.outputs, default=str)
    assert admin not in everything and reader not in everything


def test_the_registry_tls_secret_holds_the_configured_pem(run):
    _, inputs = secret_named(run, "schema-registry-tls")
    assert inputs["metadata"]["name"] == registry_values()["tls"]["secret"]
    assert inputs["metadata"]["namespace"] == run.config[f"{PROJECT}:namespace"]
    assert inputs["type"] == "kubernetes.io/tls"
    assert inputs["stringData"] == {"tls.crt": CERT, "tls.key": KEY}


def test_the_registry_secrets_are_secret_and_made_before_the_chart(run):
    # depends_on of the chart's component: its Release is registered after these exist.
    chart_urn = next(u for u in run.urns if u.endswith("$kafka-patterns:index:PatternsChart::patterns"))
    for name in ("schema-registry-users", "schema-registry-tls"):
        urn, _ = secret_named(run, name)
        assert {"data", "stringData"} <= set(run.requests[urn].additionalSecretOutputs)
        assert urn in run.requests[chart_urn].dependencies, f"the chart does not wait for {name}"
    assert run.release("patterns")["values"].get("schemaRegistry", {}).get("enabled", True) is True
    assert run.outputs["schema_registry"] is True


@pytest.mark.parametrize(("key", "value", "says"), [
    ("schemaRegistryReaderPassword", None, "is not set"),
    ("schemaRegistryAdminPassword", "", "does not hold"),
    ("schemaRegistryTlsCert", KEY, "does not hold a PEM certificate"),
    ("schemaRegistryTlsKey", None, "is not set"),
])
def test_a_missing_or_wrong_registry_key_fails_fast_naming_it(key, value, says):
    config = stack_config("dev")
    config.update({f"{PROJECT}:{k}": v for k, v in REGISTRY_SECRETS.items() if k != key})
    if value is not None:
        config[f"{PROJECT}:{key}"] = value
    with pytest.raises(pulumi.RunError, match=f"{PROJECT}:{key} {says}") as failed:
        run_program("dev", config)
    assert "pulumi config set --secret " + key in str(failed.value)
    assert "schemaRegistryEnabled false" in str(failed.value)


def test_disabling_the_registry_needs_no_secret_and_turns_it_off_in_the_chart():
    config = stack_config("dev") | {f"{PROJECT}:schemaRegistryEnabled": "false"}
    run = run_program("dev", config)
    assert run.of_type(SECRET) == []
    assert not any("SchemaRegistrySecrets" in urn for urn in run.urns)
    assert run.release("patterns")["values"]["schemaRegistry"] == {"enabled": False}
    assert run.outputs["schema_registry"] is False


def test_every_stack_gives_the_spark_operator_pods_cpu_requests(any_run):
    # BestEffort pods starved on a busy node (docs/measurements/20261130.md): every stack
    # requests, not only the local one.
    values = next(r.inputs for r in any_run.of_type(RELEASE) if r.inputs.get("name") == "spark-operator")["values"]
    assert values["controller"]["resources"]["requests"]["cpu"]
    assert values["webhook"]["resources"]["requests"]["cpu"]


def test_every_release_of_our_chart_carries_the_chart_digest(any_run):
    sys.path.insert(0, str(PULUMI_DIR))
    try:
        from kp_infra.settings import chart_digest
    finally:
        sys.path.remove(str(PULUMI_DIR))
    charts = [r.inputs for r in any_run.of_type(RELEASE) if r.inputs["chart"] == str(ROOT / "helm" / "kafka-patterns")]
    assert charts
    assert {c["values"]["global"]["kafkaPatternsChartDigest"] for c in charts} == {chart_digest()}


# --- the local stack: charts, Secrets and volumes on this machine ----------------------

def releases_in(run: Run, name: str) -> dict[str, dict[str, Any]]:
    """namespace -> inputs of the Helm releases named `name`."""
    return {r.inputs["namespace"]: r.inputs for r in run.of_type(RELEASE) if r.inputs.get("name") == name}


def without_secrets(value: Any) -> Any:
    """The inputs with every secret envelope replaced: what is left is in clear."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return "[secret]"
        return {k: without_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_secrets(v) for v in value]
    return value


def test_the_local_stack_takes_the_operators_charts_from_this_machine(local_run, pins):
    from kp_infra.settings import user_cache

    strimzi = local_run.release("strimzi-cluster-operator")
    assert strimzi["chart"] == str(user_cache() / f"strimzi-{pins['strimzi_version']}" / "helm-chart")
    assert "version" not in strimzi
    assert strimzi["values"]["watchNamespaces"] == ["kafka-patterns-strimzi"]
    assert strimzi["values"]["image"]["imagePullPolicy"] == "Never"
    assert strimzi["values"]["annotations"] == {"kafka-patterns/image-inputs": "k3y"}
    spark = local_run.release("spark-operator")
    assert spark["chart"].endswith(f"spark-operator/v2@v{pins['spark_operator_version']}/charts/spark-operator-chart")
    assert "repositoryOpts" not in spark
    assert spark["values"]["image"]["tag"] == pins["spark_operator_version"], "{pin} is a pin of versions.yml"
    assert spark["values"]["spark"]["jobNamespaces"] == ["kafka-patterns", "kafka-patterns-strimzi"]


def test_the_local_stack_has_a_bring_your_own_and_a_strimzi_release(local_run):
    charts = releases_in(local_run, "patterns")
    assert set(charts) == {"kafka-patterns", "kafka-patterns-strimzi"}
    own, strimzi = charts["kafka-patterns"]["values"], charts["kafka-patterns-strimzi"]["values"]
    assert own["kafka"]["external"]["bootstrap"] == BOOTSTRAP, "the bootstrap make up wrote"
    assert strimzi["kafka"]["nodePools"] == "combined"
    assert "annotations" not in strimzi["kafka"] or not strimzi["kafka"]["annotations"]
    assert local_run.outputs["bootstrap_address"] == BOOTSTRAP
    assert local_run.outputs["kafka_external"] is True
    assert local_run.outputs["strimzi_namespaces"] == ["kafka-patterns-strimzi"]
    names = {r.inputs["metadata"]["name"] for r in local_run.of_type(NAMESPACE)}
    assert names == {"kafka-patterns", "kafka-patterns-operators", "kafka-patterns-strimzi"}


def test_the_local_stack_makes_every_pods_secret_as_a_secret(local_run, cat):
    secrets = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r for r in local_run.of_type(SECRET)}
    for job in cat["jobs"]:
        name = k8s_name(job["name"])
        assert ("kafka-patterns", name) in secrets, f"no password Secret for {job['name']}"
    for namespace in ("kafka-patterns", "kafka-patterns-strimzi"):
        assert {(namespace, "postgresql-app"), (namespace, "postgresql-cdc")} <= set(secrets)
    assert ("kafka-patterns", "patterns-cluster-ca-cert") in secrets
    for resource in secrets.values():
        envelope = resource.inputs["stringData"]
        assert envelope.get(rpc._special_sig_key) == rpc._special_secret_sig, resource.name
    clear = json.dumps(without_secrets([r.inputs for r in local_run.resources]))
    clear += json.dumps(local_run.outputs, default=str)
    for needle in [user_password(job["name"]) for job in cat["jobs"]] + ["pg-app-secret-77", "pg-cdc-secret-77",
                                                                         "admin-pw-4d1f", "reader-pw-9c2e"]:
        assert needle not in clear, "a password in clear"
    # The chart's releases come after the Secrets they mount.
    chart_urn = next(u for u in local_run.urns if u.endswith("$kafka-patterns:index:PatternsChart::patterns"))
    # (a component's dependency is on each of its children)
    secret_urns = {u for u in local_run.urns if "PodsAccessSecrets$kubernetes:core/v1:Secret" in u}
    assert secret_urns <= set(local_run.requests[chart_urn].dependencies)


def test_the_local_stack_reserves_a_kept_host_volume_for_every_claim(local_run):
    volumes = {r.inputs["metadata"]["name"]: r for r in local_run.of_type("kubernetes:core/v1:PersistentVolume")}
    kafka = {f"kafka-patterns-strimzi-data-0-patterns-dual-role-{i}" for i in range(3)}
    checkpoints = {"kafka-patterns-spark-checkpoints", "kafka-patterns-strimzi-spark-checkpoints"}
    assert set(volumes) == kafka | checkpoints
    for name, volume in volumes.items():
        spec = volume.inputs["spec"]
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["hostPath"]["path"].endswith(f"/volumes/{spec['claimRef']['namespace']}/{spec['claimRef']['name']}")
        urn = next(u for u in local_run.urns if u.endswith(f"::volumes-{name}"))
        assert local_run.requests[urn].retainOnDelete, f"make destroy would delete {name}"


def test_a_missing_pods_access_file_fails_naming_make_up(tmp_path, cat):
    config = stack_config(LOCAL_STACK) | local_files(tmp_path, cat)
    (tmp_path / "pods-access" / "users" / f"{cat['jobs'][0]['name']}.password").unlink()
    with pytest.raises(Exception, match=r"password is missing: run `make up`"):
        run_program(LOCAL_STACK, config)


def test_the_recovery_of_kept_volumes_pauses_only_the_strimzi_release(tmp_path, cat):
    config = stack_config(LOCAL_STACK) | local_files(tmp_path, cat)
    config[f"{PROJECT}:strimziReconciliationPaused"] = "true"
    charts = releases_in(run_program(LOCAL_STACK, config), "patterns")
    assert charts["kafka-patterns-strimzi"]["values"]["kafka"]["annotations"] == {
        "strimzi.io/pause-reconciliation": "true"}
    assert not charts["kafka-patterns"]["values"]["kafka"].get("annotations")


def test_the_volume_directories_the_deploy_makes_are_the_program_volumes(local_run):
    from kp_infra import settings as settings_mod
    from kp_infra.volumes import host_volumes

    stack_file = settings_mod.StackFile(LOCAL_STACK)
    # The same files as the program run: the deploy's list is read after `make up`.
    for key in ("podsAccessDir", "volumesDir"):
        stack_file.values[key] = local_run.config[f"{PROJECT}:{key}"]
    listed = host_volumes(settings_mod.load(stack_file, with_secrets=False))
    paths = {v.name: v.path for v in listed}
    made = {r.inputs["metadata"]["name"]: r.inputs["spec"]["hostPath"]["path"]
            for r in local_run.of_type("kubernetes:core/v1:PersistentVolume")}
    assert set(paths) == set(made)
    assert {v.owner for v in listed if "dual-role" in v.claim} == {1001}

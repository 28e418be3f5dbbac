"""The catalogue's client jobs (engine: client) on Kubernetes: each job of
clients.jobs.include (empty = all) runs as exactly one Deployment (until stopped) or
suspended CronJob (replay: a Job template run on demand), on the Spark image through
its launcher, as its own Kafka user, with the Spark applications' environment; each
pod a member of its own; no password in any object; unprivileged, read-only pods."""

from __future__ import annotations

import json
from typing import Any

import pytest
from manifests import (
    CLIENT_VARIANTS,
    ROOT,
    VARIANTS,
    app_specs,
    by_name,
    env,
    k8s_name,
    kinds,
    objects_of,
    template,
    values_of,
)

RUNTIME_KINDS = ("Deployment", "CronJob")
JOBS_DIR = ROOT / "spark-jobs" / "src" / "kafka_patterns" / "jobs"
POD_NAME = "$(POD_NAME)"


def member_option(job: dict[str, Any]) -> str | None:
    """The option the catalogue's kubernetes.memberArgs give the pod name (from the
    downward API): what makes each pod of the job a member of its own."""
    args = job["kubernetes"].get("memberArgs") or []
    return args[args.index(POD_NAME) - 1] if POD_NAME in args else None
# A Deployment's pods are <name>-<template hash, up to 10>-<5>: a name this short keeps
# all of it in every pod name, so a per-pod id starts with the job's name (its ACLs).
DEPLOYMENT_NAME_MAX = 63 - len("-0123456789-abcde")
CRONJOB_NAME_MAX = 52  # the API server's limit: its Jobs get an 11-character suffix


def runs(variant: str, job: str) -> bool:
    """The variant's clients.jobs.include (empty = all) has the job."""
    include = values_of(variant)["clients"]["jobs"]["include"]
    return not include or job in include


def client_jobs(cat, variant: str) -> list[dict[str, Any]]:
    return [j for j in cat["jobs"] if j["engine"] == "client" and runs(variant, j["name"])]


def runtimes(objects) -> dict[str, list[dict[str, Any]]]:
    """Job name -> the client runtimes labelled with it (not the other Deployments: the
    canary's, the lag exporter's)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in RUNTIME_KINDS:
        for obj in kinds(objects, kind):
            if "kafka-patterns/job" in obj["metadata"]["labels"]:
                out.setdefault(obj["metadata"]["labels"]["kafka-patterns/job"], []).append(obj)
    return out


def pod_template(runtime: dict[str, Any]) -> dict[str, Any]:
    spec = runtime["spec"]
    return spec["jobTemplate"]["spec"]["template"] if runtime["kind"] == "CronJob" else spec["template"]


def container(runtime: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod_template(runtime)["spec"]["containers"]
    return only


def by_job(objects) -> dict[str, dict[str, Any]]:
    """Job name -> its one client runtime."""
    return {job: found[0] for job, found in runtimes(objects).items()}


def job_neutral(entries: list[dict[str, Any]], job: str, user: str) -> list[dict[str, Any]]:
    """An env list with what differs from job to job (its name, its user, its password
    Secret) replaced by placeholders, so that two jobs' envs compare."""
    out = []
    for e in entries:
        e = json.loads(json.dumps(e))
        if e["name"] == "KAFKA_PATTERNS_JOB":
            assert e["value"] == job
            e["value"] = "<job>"
        elif e["name"] == "KAFKA_CLIENT_SASL_USERNAME":
            assert e["value"] == user
            e["value"] = "<user>"
        elif e["name"] == "KAFKA_CLIENT_SASL_PASSWORD":
            assert e["valueFrom"]["secretKeyRef"]["name"] == k8s_name(job)
            e["valueFrom"]["secretKeyRef"]["name"] = "<secret>"
        out.append(e)
    return out


def strings(obj: Any):
    """Every string in an object, keys included."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)
    elif isinstance(obj, str):
        yield obj


def env_entries(obj: Any):
    """Every env entry anywhere in an object (pods, Spark roles)."""
    if isinstance(obj, dict):
        if isinstance(obj.get("env"), list):
            yield from obj["env"]
        for v in obj.values():
            yield from env_entries(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from env_entries(v)


@pytest.mark.parametrize("variant", CLIENT_VARIANTS)
def test_every_client_job_has_exactly_one_runtime(rendered, cat, variant):
    found = runtimes(rendered[variant])
    jobs = client_jobs(cat, variant)
    assert jobs, f"{variant} runs no client job"
    assert sorted(found) == sorted(j["name"] for j in jobs)
    for job in jobs:
        (runtime,) = found[job["name"]]
        assert runtime["metadata"]["name"] == k8s_name(job["name"])
        limit = CRONJOB_NAME_MAX if runtime["kind"] == "CronJob" else DEPLOYMENT_NAME_MAX
        assert len(runtime["metadata"]["name"]) <= limit
        if runtime["kind"] == "Deployment":
            selector = runtime["spec"]["selector"]["matchLabels"]
            assert selector.items() <= pod_template(runtime)["metadata"]["labels"].items()
            assert selector["kafka-patterns/job"] == job["name"]


def test_values_yaml_runs_every_client_job_and_the_local_cluster_a_work_queue_of_two(rendered, cat):
    assert values_of("default")["clients"]["jobs"]["include"] == []
    # On the local Kubernetes the client job runs on the in-cluster Kafka.
    assert not by_job(rendered["local"])
    local = by_job(rendered["local-strimzi"])
    assert sorted(local) == ["work-queue"]
    assert local["work-queue"]["kind"] == "Deployment" and local["work-queue"]["spec"]["replicas"] == 2
    # The 2-core node: a fraction of a core per pod.
    assert container(local["work-queue"])["resources"]["requests"]["cpu"].endswith("m")


@pytest.mark.parametrize("variant", CLIENT_VARIANTS)
def test_client_jobs_run_their_module_on_the_spark_image_through_its_launcher(rendered, cat, versions, variant):
    values = values_of(variant)["spark"]
    image = f"{values['image']['repository']}:{values['image']['tag'] or versions['spark_version']}"
    assert {spec["image"] for spec in app_specs(rendered[variant]).values()} == {image}
    found = by_job(rendered[variant])
    for job in client_jobs(cat, variant):
        c = container(found[job["name"]])
        assert c["image"] == image
        assert c["imagePullPolicy"] == values["image"]["pullPolicy"]
        # tini as PID 1, then the launcher every SparkApplication names (spark.launcher).
        assert c["command"] == ["/usr/bin/tini", "--", "python3", values["launcher"].removeprefix("local://")]
        # The module first; never the catalogue's args, which the job reads itself.
        assert c["args"][0] == job["module"]
        assert not any(a in c["args"] for a in job.get("args", []) if a.startswith("--")), c["args"]


def test_each_pod_is_a_member_of_its_own(rendered, cat):
    found = by_job(rendered["default"])
    for job in client_jobs(cat, "default"):
        c = container(found[job["name"]])
        option = member_option(job)
        # The independent part: a transactional job needs one transactional.id per pod.
        if job.get("transactional"):
            assert option == "--transactional-id", f"{job['name']}: one transactional.id per pod"
        if option is None:
            assert POD_NAME not in c["args"], job["name"]
            continue
        assert c["args"][c["args"].index(option) + 1] == POD_NAME, job["name"]
        assert env(c)["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        # The pod name starts with the Deployment's, the job's name: the prefix of its ACLs.
        assert found[job["name"]]["metadata"]["name"] == job["name"]


def test_every_option_the_chart_passes_is_one_the_module_takes(rendered, cat):
    # The module's own parser, the client jobs' shared one (jobs/client.py) or every
    # job's (jobs/base.py) declares it.
    shared = (JOBS_DIR / "client.py").read_text() + (JOBS_DIR / "base.py").read_text()
    for job, runtime in by_job(rendered["default"]).items():
        module = next(j["module"] for j in cat["jobs"] if j["name"] == job)
        source = (JOBS_DIR / (module.rsplit(".", 1)[1] + ".py")).read_text() + shared
        options = [a for a in container(runtime)["args"] if a.startswith("--")]
        assert all(f'"{o}"' in source for o in options), (job, options)


@pytest.mark.parametrize("variant", CLIENT_VARIANTS)
def test_client_pods_get_the_spark_applications_environment_and_ca(rendered, cat, variant):
    objects = rendered[variant]
    spark_job, spark = next(iter(app_specs(objects).items()))
    driver = spark["driver"]
    user = env(driver)["KAFKA_CLIENT_SASL_USERNAME"]["value"]
    # Everything but the Spark checkpoints and the driver's metrics port, in the same order.
    driver_only = ("CHECKPOINT_ROOT", "KP_METRICS_PORT", "KP_METRICS_ADDR")
    want = job_neutral([e for e in driver["env"] if e["name"] not in driver_only], spark_job, user)
    spark_ca = [v for v in spark["volumes"] if v["name"] == "cluster-ca"]
    spark_mounts = [m for m in driver["volumeMounts"] if m["name"] == "cluster-ca"]
    found = by_job(objects)
    for job in client_jobs(cat, variant):
        pod = pod_template(found[job["name"]])["spec"]
        c = container(found[job["name"]])
        user = env(c)["KAFKA_CLIENT_SASL_USERNAME"]["value"]
        assert job_neutral([e for e in c["env"] if e["name"] != "POD_NAME"], job["name"], user) == want
        assert [v for v in pod["volumes"] if v["name"] == "cluster-ca"] == spark_ca
        assert [m for m in c["volumeMounts"] if m["name"] == "cluster-ca"] == spark_mounts


def test_a_brought_kafkas_user_names_and_trust_store_reach_the_client_pods(helm):
    objects = objects_of(helm, "kafka.external.enabled=true", "kafka.external.bootstrap=b-1.example.com:9096",
                         "kafka.external.userNames.work-queue=ABCDEF123")
    c = container(by_job(objects)["work-queue"])
    e = env(c)
    assert e["KAFKA_BOOTSTRAP_SERVERS"]["value"] == "b-1.example.com:9096"
    assert e["KAFKA_CLIENT_SASL_USERNAME"]["value"] == "ABCDEF123"
    # The password Secret keeps the KafkaUser's name whatever the SASL user name.
    assert e["KAFKA_CLIENT_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "work-queue", "key": "password"}
    assert "KAFKA_CLIENT_SSL_CA_LOCATION" not in e
    assert "cluster-ca" not in {m["name"] for m in c["volumeMounts"]}


def test_clients_jobs_include_selects_the_client_runtimes(helm):
    objects = objects_of(helm, "clients.jobs.include={work-queue,replay}")
    assert {job: r["kind"] for job, r in by_job(objects).items()} == {"work-queue": "Deployment", "replay": "CronJob"}
    # Users stay those of the whole catalogue, and the Spark jobs are spark.jobs.include's.
    assert len(kinds(objects, "KafkaUser")) > 2 and app_specs(objects)


def test_replicas_and_arguments_come_from_the_values(helm):
    objects = objects_of(helm, "clients.replicas.work-queue=4", "clients.replicas.at-most-once=0",
                         "clients.args.replay={--run,r1,--name,nightly,--from-offsets,x}",
                         "clients.args.work-queue={--batch,50}")
    found = by_job(objects)
    assert found["work-queue"]["spec"]["replicas"] == 4
    assert found["at-most-once"]["spec"]["replicas"] == 0, "a job can be scaled to nothing"
    assert found["share-queue"]["spec"]["replicas"] == 1
    assert container(found["replay"])["args"] == ["kafka_patterns.jobs.replay", "--run", "r1", "--name", "nightly",
                                                  "--from-offsets", "x"]
    # After the pod's own: a later option wins.
    assert container(found["work-queue"])["args"][-4:] == ["--worker-id", POD_NAME, "--batch", "50"]


@pytest.mark.parametrize(("sets", "message"), [
    (["clients.jobs.include={work-queue,one-to-one,nope}"],
     "clients.jobs.include: one-to-one, nope not catalogue job(s) with engine: client"),
    (["clients.replicas.one-to-one=2"], "clients.replicas: one-to-one is not a catalogue client job"),
    (["clients.args.nope={--x}"], "clients.args: nope is not a catalogue client job"),
    (["clients.replicas.self-managed-offsets=2"], "clients.replicas.self-managed-offsets: 2, but it runs one pod"),
    (["clients.replicas.work-queue=-1"], "/clients/replicas/work-queue"),
])
def test_a_bad_clients_value_fails_the_render_naming_it(helm, sets, message):
    proc = template(helm, *sets)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_self_managed_offsets_runs_alone_also_during_a_rollout(rendered):
    deployment = by_job(rendered["prod"])["self-managed-offsets"]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}


def test_prod_spreads_each_jobs_pods_over_zones(rendered):
    for runtime in by_job(rendered["prod"]).values():
        template = pod_template(runtime)
        (spread,) = template["spec"]["topologySpreadConstraints"]
        assert spread["topologyKey"] == "topology.kubernetes.io/zone"
        assert spread["labelSelector"]["matchLabels"] == template["metadata"]["labels"]
    assert "topologySpreadConstraints" not in pod_template(by_job(rendered["dev"])["work-queue"])["spec"]


@pytest.mark.parametrize("variant", [v for v in CLIENT_VARIANTS if runs(v, "replay")])
def test_replay_is_a_job_template_that_never_fires_on_its_own(rendered, variant):
    cron = by_name(rendered[variant], "CronJob")["replay"]
    assert cron["spec"]["suspend"] is True
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert pod_template(cron)["spec"]["restartPolicy"] == "Never"
    assert cron["spec"]["jobTemplate"]["metadata"]["labels"]["kafka-patterns/job"] == "replay"


@pytest.mark.parametrize("variant", VARIANTS)
def test_client_pods_run_unprivileged_on_a_read_only_root(rendered, cat, variant):
    resources = values_of(variant)["clients"]["resources"]
    for runtime in by_job(rendered[variant]).values():
        pod = pod_template(runtime)["spec"]
        c = container(runtime)
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod.get("hostNetwork") is not True and pod["automountServiceAccountToken"] is False
        assert c["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                        "capabilities": {"drop": ["ALL"]}}
        tmp = next(m for m in c["volumeMounts"] if m["mountPath"] == "/tmp")
        assert {"name": tmp["name"], "emptyDir": {}} in pod["volumes"]
        assert c["resources"] == resources


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_object_holds_a_password(rendered, variant):
    objects = rendered[variant]
    assert not kinds(objects, "Secret")
    for obj in objects:
        for e in env_entries(obj):
            if "PASSWORD" in e["name"]:
                assert "value" not in e and "secretKeyRef" in e["valueFrom"], (obj["metadata"]["name"], e)
        assert not [s for s in strings(obj) if "password=" in s.lower() or 'password="' in s.lower()]


def test_every_client_runtime_is_schema_checked(rendered):
    # test_schemas validates every built-in object: the client runtimes are among them.
    assert {o["apiVersion"] for o in rendered["default"] if o["kind"] in RUNTIME_KINDS} == {"apps/v1", "batch/v1"}
    # The local stack's client job, in its Strimzi-mode release (the canary runs beside it).
    jobs = [d for d in kinds(rendered["local-strimzi"], "Deployment")
            if "kafka-patterns/job" in d["metadata"]["labels"]]
    assert [d["metadata"]["name"] for d in jobs] == ["work-queue"]

"""The catalogue's Spark jobs as spark-operator resources: a SparkApplication per
streaming job, a ScheduledSparkApplication (Forbid) per scheduled job (the jobs of
spark.jobs.include, when set), all on the project image, running the job's module,
with its Kafka user's credentials: a Strimzi KafkaUser's, or in bring-your-own-Kafka
mode a Secret of the same name."""

from __future__ import annotations

from typing import Any

import pytest
from manifests import (
    BYO_VARIANTS,
    NAMESPACE,
    SPARK_VARIANTS,
    STRIMZI_VARIANTS,
    VARIANTS,
    app_specs,
    by_name,
    env,
    k8s_name,
    one,
    values_of,
)

# spark-operator names a scheduled run <name>-<unix nanos> (19 digits) and a driver pod
# <run>-driver; pod names are DNS labels (<= 63 characters).
SCHEDULED_NAME_MAX = 63 - len("-1234567890123456789") - len("-driver")
APP_NAME_MAX = 63 - len("-driver")


def spark_jobs(cat, scheduled: bool, variant: str = "default") -> list[dict[str, Any]]:
    """The variant's Spark jobs (spark.jobs.include, empty = all), streaming or scheduled
    (a schedule of the catalogue or of spark.scheduled.schedules)."""
    values = values_of(variant)["spark"]
    include = values["jobs"]["include"]
    schedules = values["scheduled"]["schedules"]
    return [{**j, "schedule": schedules.get(j["name"], j.get("schedule"))} for j in cat["jobs"]
            if j["engine"] == "spark" and (not include or j["name"] in include)
            and bool(j.get("schedule")) == scheduled]


@pytest.mark.parametrize("variant", SPARK_VARIANTS)
def test_every_streaming_job_is_a_spark_application(rendered, cat, variant):
    apps = by_name(rendered[variant], "SparkApplication")
    assert sorted(apps) == sorted(k8s_name(j["name"]) for j in spark_jobs(cat, False, variant))
    assert all(len(name) <= APP_NAME_MAX for name in apps)


def test_the_catalogue_has_streaming_and_scheduled_spark_jobs(cat):
    assert spark_jobs(cat, scheduled=False) and spark_jobs(cat, scheduled=True)


@pytest.mark.parametrize("variant", SPARK_VARIANTS)
def test_every_scheduled_job_is_a_scheduled_spark_application_that_never_overlaps(rendered, cat, variant):
    scheduled = by_name(rendered[variant], "ScheduledSparkApplication")
    jobs = spark_jobs(cat, True, variant)
    assert sorted(scheduled) == sorted(k8s_name(j["name"]) for j in jobs)
    for job in jobs:
        app = scheduled[k8s_name(job["name"])]
        assert len(app["metadata"]["name"]) <= SCHEDULED_NAME_MAX
        assert app["spec"]["schedule"] == job["schedule"]
        assert app["spec"]["concurrencyPolicy"] == "Forbid"


@pytest.mark.parametrize("variant", VARIANTS)
def test_client_jobs_get_no_spark_application(rendered, cat, variant):
    specs = app_specs(rendered[variant])
    assert not {j["name"] for j in cat["jobs"] if j["engine"] != "spark"} & set(specs)


@pytest.mark.parametrize("variant", SPARK_VARIANTS)
def test_spark_jobs_run_their_module_on_the_project_image(rendered, cat, versions, variant):
    specs = app_specs(rendered[variant])
    pull = values_of(variant)["spark"]["image"]["pullPolicy"]
    for job in spark_jobs(cat, False, variant) + spark_jobs(cat, True, variant):
        spec = specs[job["name"]]
        assert spec["type"] == "Python" and spec["mode"] == "cluster"
        assert spec["sparkVersion"] == versions["spark_version"]
        assert spec["image"].endswith(":" + versions["spark_version"])
        assert spec["imagePullPolicy"] == pull
        # The image's launcher runs `python -m <module> [args]` (spark-jobs/Dockerfile).
        assert spec["mainApplicationFile"] == "local:///opt/spark/work-dir/run_job.py"
        # Only the module: the job reads its catalogue args itself (KAFKA_PATTERNS_JOB).
        assert spec["arguments"] == [job["module"]]


@pytest.mark.parametrize("variant", SPARK_VARIANTS)
def test_spark_drivers_run_as_an_account_with_a_namespaced_role(rendered, variant):
    objects = rendered[variant]
    account = one(objects, "ServiceAccount")["metadata"]["name"]
    binding = one(objects, "RoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": one(objects, "Role")["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
    assert {spec["driver"]["serviceAccount"] for spec in app_specs(objects).values()} == {account}


def kafka_settings(objects, variant: str) -> dict[str, Any]:
    """What every Spark pod must get: bootstrap, SASL mechanism, CA Secret and key
    (None = the system trust store), user name per job."""
    if variant in STRIMZI_VARIANTS:
        kafka = one(objects, "Kafka")
        cluster, port = kafka["metadata"]["name"], kafka["spec"]["kafka"]["listeners"][0]["port"]
        users = set(by_name(objects, "KafkaUser"))
        return {"bootstrap": f"{cluster}-kafka-bootstrap.{NAMESPACE}.svc:{port}", "mechanism": "SCRAM-SHA-512",
                "ca": (f"{cluster}-cluster-ca-cert", "ca.crt"), "user": lambda job: k8s_name(job) if
                k8s_name(job) in users else None}
    external = values_of(variant)["kafka"]["external"]
    ca = external["caSecret"]
    return {"bootstrap": external["bootstrap"], "mechanism": external["saslMechanism"],
            "ca": (ca["name"], ca["key"]) if ca["name"] else None,
            "user": lambda job: external["userNames"].get(job, k8s_name(job))}


@pytest.mark.parametrize("variant", VARIANTS)
def test_spark_pods_get_the_kafka_postgres_and_checkpoint_settings(rendered, variant):
    objects = rendered[variant]
    want = kafka_settings(objects, variant)
    for job, spec in app_specs(objects).items():
        volumes = {v["name"]: v for v in spec["volumes"]}
        for role in ("driver", "executor"):
            pod = spec[role]
            e = env(pod)
            mounts = {m["mountPath"]: m["name"] for m in pod["volumeMounts"]}
            assert e["KAFKA_BOOTSTRAP_SERVERS"]["value"] == want["bootstrap"]
            assert e["KAFKA_CLIENT_SECURITY_PROTOCOL"]["value"] == "SASL_SSL"
            assert e["KAFKA_CLIENT_SASL_MECHANISM"]["value"] == want["mechanism"]
            assert e["KAFKA_CLIENT_SASL_USERNAME"]["value"] == want["user"](job)
            # The User Operator's Secret (or one of the same name): the KafkaUser's name, key "password".
            assert e["KAFKA_CLIENT_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": k8s_name(job),
                                                                                    "key": "password"}
            if want["ca"] is None:
                assert "KAFKA_CLIENT_SSL_CA_LOCATION" not in e and "cluster-ca" not in volumes
            else:
                ca_dir, ca_file = e["KAFKA_CLIENT_SSL_CA_LOCATION"]["value"].rsplit("/", 1)
                secret = volumes[mounts[ca_dir]]["secret"]
                assert secret["secretName"] == want["ca"][0]
                assert {"key": want["ca"][1], "path": ca_file} in secret["items"]
            dsn = dict(kv.split("=", 1) for kv in e["POSTGRES_DSN"]["value"].split())
            assert set(dsn) == {"host", "port", "dbname", "user"}, "the password comes from PGPASSWORD"
            assert e["PGPASSWORD"]["valueFrom"]["secretKeyRef"]["name"]
            assert mounts[e["CHECKPOINT_ROOT"]["value"]] == "checkpoints"


@pytest.mark.parametrize("variant", VARIANTS)
def test_spark_pods_request_the_cpu_the_values_give(rendered, variant):
    spark = values_of(variant)["spark"]
    for spec in app_specs(rendered[variant]).values():
        for role in ("driver", "executor"):
            assert spec[role]["cores"] == spark[role]["cores"]
            assert spec[role].get("coreRequest", "") == spark[role]["coreRequest"]
            assert spec[role].get("coreLimit", "") == spark[role]["coreLimit"]


@pytest.mark.parametrize("variant", ["prod", *BYO_VARIANTS])
def test_checkpoints_survive_the_pods(rendered, variant):
    claim = one(rendered[variant], "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    for spec in app_specs(rendered[variant]).values():
        volume = next(v for v in spec["volumes"] if v["name"] == "checkpoints")
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]

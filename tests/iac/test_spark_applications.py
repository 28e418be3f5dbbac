"""The catalogue's Spark jobs as spark-operator resources: a SparkApplication per
streaming job, a ScheduledSparkApplication (Forbid) per scheduled job, all on the
project image, running the job's module, with its KafkaUser's credentials."""

from __future__ import annotations

from typing import Any

import pytest
from manifests import NAMESPACE, VARIANTS, by_name, k8s_name, kinds, one

# spark-operator names a scheduled run <name>-<unix nanos> (19 digits) and a driver pod
# <run>-driver; pod names are DNS labels (<= 63 characters).
SCHEDULED_NAME_MAX = 63 - len("-1234567890123456789") - len("-driver")
APP_NAME_MAX = 63 - len("-driver")


def spark_jobs(cat, scheduled: bool) -> list[dict[str, Any]]:
    return [j for j in cat["jobs"] if j["engine"] == "spark" and bool(j.get("schedule")) == scheduled]


def app_specs(objects) -> dict[str, dict[str, Any]]:
    """Job name -> SparkApplication spec (a scheduled one's template)."""
    out = {}
    for app in kinds(objects, "SparkApplication"):
        out[app["metadata"]["labels"]["kafka-patterns/job"]] = app["spec"]
    for app in kinds(objects, "ScheduledSparkApplication"):
        out[app["metadata"]["labels"]["kafka-patterns/job"]] = app["spec"]["template"]
    return out


def env(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in pod["env"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_streaming_job_is_a_spark_application(rendered, cat, variant):
    apps = by_name(rendered[variant], "SparkApplication")
    assert sorted(apps) == sorted(k8s_name(j["name"]) for j in spark_jobs(cat, scheduled=False))
    assert all(len(name) <= APP_NAME_MAX for name in apps)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_scheduled_job_is_a_scheduled_spark_application_that_never_overlaps(rendered, cat, variant):
    scheduled = by_name(rendered[variant], "ScheduledSparkApplication")
    jobs = spark_jobs(cat, scheduled=True)
    assert jobs, "the catalogue has a scheduled job"
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


@pytest.mark.parametrize("variant", VARIANTS)
def test_spark_jobs_run_their_module_on_the_project_image(rendered, cat, versions, variant):
    specs = app_specs(rendered[variant])
    for job in spark_jobs(cat, scheduled=False) + spark_jobs(cat, scheduled=True):
        spec = specs[job["name"]]
        assert spec["type"] == "Python" and spec["mode"] == "cluster"
        assert spec["sparkVersion"] == versions["spark_version"]
        assert spec["image"].endswith(":" + versions["spark_version"])
        # The image's launcher runs `python -m <module> [args]` (spark-jobs/Dockerfile).
        assert spec["mainApplicationFile"] == "local:///opt/spark/work-dir/run_job.py"
        assert spec["arguments"] == [job["module"], *job.get("args", [])]


@pytest.mark.parametrize("variant", VARIANTS)
def test_spark_drivers_run_as_an_account_with_a_namespaced_role(rendered, variant):
    objects = rendered[variant]
    account = one(objects, "ServiceAccount")["metadata"]["name"]
    binding = one(objects, "RoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": one(objects, "Role")["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
    assert {spec["driver"]["serviceAccount"] for spec in app_specs(objects).values()} == {account}


@pytest.mark.parametrize("variant", VARIANTS)
def test_spark_pods_get_the_kafka_postgres_and_checkpoint_settings(rendered, variant):
    objects = rendered[variant]
    kafka = one(objects, "Kafka")
    cluster, port = kafka["metadata"]["name"], kafka["spec"]["kafka"]["listeners"][0]["port"]
    users = by_name(objects, "KafkaUser")
    for job, spec in app_specs(objects).items():
        volumes = {v["name"]: v for v in spec["volumes"]}
        for role in ("driver", "executor"):
            pod = spec[role]
            e = env(pod)
            mounts = {m["mountPath"]: m["name"] for m in pod["volumeMounts"]}
            assert e["KAFKA_BOOTSTRAP_SERVERS"]["value"] == f"{cluster}-kafka-bootstrap.{NAMESPACE}.svc:{port}"
            assert e["KAFKA_CLIENT_SECURITY_PROTOCOL"]["value"] == "SASL_SSL"
            assert e["KAFKA_CLIENT_SASL_MECHANISM"]["value"] == "SCRAM-SHA-512"
            user = e["KAFKA_CLIENT_SASL_USERNAME"]["value"]
            assert user == k8s_name(job) and user in users
            # The User Operator's Secret: named after the user, key "password".
            assert e["KAFKA_CLIENT_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": user, "key": "password"}
            ca_dir, ca_file = e["KAFKA_CLIENT_SSL_CA_LOCATION"]["value"].rsplit("/", 1)
            assert volumes[mounts[ca_dir]]["secret"]["secretName"] == f"{cluster}-cluster-ca-cert"
            assert {"key": "ca.crt", "path": ca_file} in volumes[mounts[ca_dir]]["secret"]["items"]
            dsn = dict(kv.split("=", 1) for kv in e["POSTGRES_DSN"]["value"].split())
            assert set(dsn) == {"host", "port", "dbname", "user"}, "the password comes from PGPASSWORD"
            assert e["PGPASSWORD"]["valueFrom"]["secretKeyRef"]["name"]
            assert mounts[e["CHECKPOINT_ROOT"]["value"]] == "checkpoints"


def test_prod_checkpoints_survive_the_pods(rendered):
    claim = one(rendered["prod"], "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    for spec in app_specs(rendered["prod"]).values():
        volume = next(v for v in spec["volumes"] if v["name"] == "checkpoints")
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]

"""Bring-your-own-Kafka mode of the chart (kafka.external) and the values the local
Kubernetes deploys (values-local.yaml): no Strimzi object, the jobs on the given
bootstrap, CA and SASL settings, a choice of jobs, CPU requests, schedule overrides,
and render errors that name the bad value."""

from __future__ import annotations

from typing import Any

import pytest
from manifests import BYO_VARIANTS, by_name, env, kinds, objects_of, one, template, values_of

STRIMZI_GROUP = "kafka.strimzi.io"


def pod_env(spec: dict[str, Any], role: str = "driver") -> dict[str, dict[str, Any]]:
    return env(spec[role])


# --set splits on commas: the bootstrap list escapes its own.
BYO = ("kafka.external.enabled=true", "kafka.external.bootstrap=b-1.example.com:9096\\,b-2.example.com:9096")


def test_values_local_brings_its_own_kafka():
    assert "local" in BYO_VARIANTS


@pytest.mark.parametrize("variant", BYO_VARIANTS)
def test_byo_mode_renders_no_strimzi_object(rendered, variant):
    assert not [o["kind"] for o in rendered[variant] if o["apiVersion"].startswith(STRIMZI_GROUP + "/")]
    assert kinds(rendered[variant], "SparkApplication") or kinds(rendered[variant], "ScheduledSparkApplication")


def test_byo_mode_without_a_ca_secret_uses_the_system_trust_store(helm):
    objects = objects_of(helm, *BYO, "kafka.external.saslMechanism=PLAIN",
                         "kafka.external.userNames.one-to-one=ABCDEF123")
    assert not [o for o in objects if o["apiVersion"].startswith(STRIMZI_GROUP + "/")]
    apps = by_name(objects, "SparkApplication")
    e = pod_env(apps["one-to-one"]["spec"], "executor")
    assert e["KAFKA_BOOTSTRAP_SERVERS"]["value"] == "b-1.example.com:9096,b-2.example.com:9096"
    assert e["KAFKA_CLIENT_SASL_MECHANISM"]["value"] == "PLAIN"
    assert e["KAFKA_CLIENT_SASL_USERNAME"]["value"] == "ABCDEF123"
    # The password Secret keeps the KafkaUser name whatever the SASL user name.
    assert e["KAFKA_CLIENT_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "one-to-one", "key": "password"}
    assert pod_env(apps["exactly-once"]["spec"])["KAFKA_CLIENT_SASL_USERNAME"]["value"] == "exactly-once"
    for app in apps.values():
        assert "KAFKA_CLIENT_SSL_CA_LOCATION" not in pod_env(app["spec"])
        assert "cluster-ca" not in {v["name"] for v in app["spec"]["volumes"]}


def test_byo_mode_mounts_the_given_ca_secret_key_as_ca_crt(helm):
    objects = objects_of(helm, *BYO, "kafka.external.caSecret.name=corp-ca", "kafka.external.caSecret.key=bundle.pem")
    spec = by_name(objects, "SparkApplication")["one-to-one"]["spec"]
    ca = next(v for v in spec["volumes"] if v["name"] == "cluster-ca")["secret"]
    assert ca == {"secretName": "corp-ca", "items": [{"key": "bundle.pem", "path": "ca.crt"}]}
    assert pod_env(spec)["KAFKA_CLIENT_SSL_CA_LOCATION"]["value"].endswith("/ca.crt")


def test_byo_mode_renders_no_connect_even_when_enabled(helm):
    objects = objects_of(helm, *BYO, "connect.enabled=true")
    assert not kinds(objects, "KafkaConnect") and not kinds(objects, "KafkaConnector")


def test_jobs_include_selects_the_spark_applications(helm):
    objects = objects_of(helm, "spark.jobs.include={one-to-one,batch-aggregate}")
    assert sorted(by_name(objects, "SparkApplication")) == ["one-to-one"]
    assert sorted(by_name(objects, "ScheduledSparkApplication")) == ["batch-aggregate"]
    # Topics and users stay those of the whole catalogue: other jobs may run elsewhere.
    assert len(kinds(objects, "KafkaUser")) > 2


def test_a_schedule_override_changes_only_that_job(helm, cat):
    objects = objects_of(helm, "spark.scheduled.schedules.batch-aggregate=@every 1m")
    assert one(objects, "ScheduledSparkApplication")["spec"]["schedule"] == "@every 1m"
    default = objects_of(helm)
    catalogue = next(j["schedule"] for j in cat["jobs"] if j["name"] == "batch-aggregate")
    assert one(default, "ScheduledSparkApplication")["spec"]["schedule"] == catalogue


def test_core_requests_go_to_the_driver_and_the_executors(helm):
    objects = objects_of(helm, "spark.driver.coreRequest=250m", "spark.executor.coreRequest=0.5",
                         "spark.executor.coreLimit=1")
    for app in kinds(objects, "SparkApplication"):
        assert app["spec"]["driver"]["coreRequest"] == "250m"
        assert app["spec"]["executor"]["coreRequest"] == "0.5"
        assert app["spec"]["executor"]["coreLimit"] == "1"
        assert "coreLimit" not in app["spec"]["driver"]


@pytest.mark.parametrize(("sets", "message"), [
    (["kafka.external.enabled=true"], "/kafka/external/bootstrap"),
    ([*BYO, "kafka.external.saslMechanism=GSSAPI"], "saslMechanism"),
    (["kafka.external.bootstrap=no-port"], "/kafka/external/bootstrap"),
    (["spark.jobs.include={one-to-one,work-queue,nope}"],
     "spark.jobs.include: work-queue, nope not catalogue job(s) with engine: spark"),
    (["spark.scheduled.schedules.one-to-one=@every 1m"],
     "spark.scheduled.schedules: one-to-one is not a scheduled catalogue Spark job"),
    (["spark.driver.coreRequest=lots"], "coreRequest"),
    (["connect.connectorConfig.stations-cdc.slot\\.name=x"],
     "connect.connectorConfig: stations-cdc is not a catalogue connector (those are: stations-source, stations-sink)"),
])
def test_a_bad_value_fails_the_render_naming_it(helm, sets, message):
    proc = template(helm, *sets)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_values_local_runs_the_local_selection_on_images_built_here(rendered, cat):
    objects = rendered["local"]
    values = values_of("local")
    assert values["spark"]["image"]["pullPolicy"] == "Never"
    # One streaming job on the host's Kafka; the others run on the in-cluster Kafka.
    assert set(by_name(objects, "SparkApplication")) == {"one-to-one"}
    assert {"one-to-one", "exactly-once"} <= set(by_name(rendered["local-strimzi"], "SparkApplication"))
    scheduled = by_name(objects, "ScheduledSparkApplication")
    assert scheduled["batch-aggregate"]["spec"]["schedule"] == "@every 1m"
    # Runs are kept, so that they can be counted.
    assert scheduled["batch-aggregate"]["spec"]["successfulRunHistoryLimit"] >= 2
    # The node has 2 cores: every pod requests a fraction of one.
    for app in kinds(objects, "SparkApplication"):
        for role in ("driver", "executor"):
            assert app["spec"][role]["coreRequest"].endswith("m")
            assert int(app["spec"][role]["coreRequest"].removesuffix("m")) < 1000


def test_values_local_points_at_the_project_bridge(rendered):
    values = values_of("local")
    assert values["postgres"]["host"] == "198.51.100.1" and values["postgres"]["port"] == 15432
    assert all(a.startswith("198.51.100.1:") for a in values["kafka"]["external"]["bootstrap"].split(","))
    claim = one(rendered["local"], "PersistentVolumeClaim")
    assert claim["spec"]["storageClassName"] == values["spark"]["checkpoint"]["storageClass"]

"""Metrics on Kubernetes: Strimzi's JMX exporter rules on Kafka and Connect (ConfigMaps
through the chart's links to catalogue/metrics/), Strimzi's
Kafka Exporter, the lag exporter and the delivery canary as Deployments of the project
image with their catalogue users, the Spark drivers' metrics port, and PodMonitors
(only where the cluster serves the API, or when asked) valid for the pinned Prometheus
Operator CRDs."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
import yaml
from manifests import (
    BYO_VARIANTS,
    CHART_DIR,
    KAFKA_EXPORTER_VARIANTS,
    NAMESPACE,
    REPO_CRD_DIR,
    ROOT,
    SPARK_VARIANTS,
    STRIMZI_VARIANTS,
    VARIANTS,
    app_specs,
    by_name,
    connect_name,
    env,
    kinds,
    objects_of,
    one,
    render_tool,
    template,
    user_acls,
    values_of,
)

from kafka_patterns.monitoring import canary, lag_exporter

RULES_DIR = ROOT / "catalogue" / "metrics"
RULE_FILES = ["kafka-metrics.yml", "connect-metrics.yml"]
RELINK = "cd helm/kafka-patterns/files && ln -sf ../../../catalogue/metrics/<name> <name>"
PODMONITOR_API = "monitoring.coreos.com/v1/PodMonitor"
PODMONITORS_ON = "monitoring.podMonitors.enabled=true"
PROMETHEUSRULE_API = "monitoring.coreos.com/v1/PrometheusRule"
RULE_ON = "monitoring.prometheusRule.enabled=true"
ALERTS = "alerts.yml"
STRIMZI_METRICS_PORT = "tcp-prometheus"
# kp.metricsApps: Deployment name -> (module, the catalogue user it runs as).
METRICS_APPS = {"lag-exporter": (lag_exporter, "operator"), "canary": (canary, "canary")}
NO_KAFKA_EXPORTER = "monitoring.kafkaExporter.enabled=false"
CANARY_ON = "monitoring.canary.enabled=true"


@pytest.fixture(scope="module")
def monitored(helm) -> dict[str, list[dict[str, Any]]]:
    """Every variant rendered with monitoring.podMonitors.enabled=true."""
    return {v: objects_of(helm, PODMONITORS_ON, variant=v) for v in VARIANTS}


def metrics_apps(objects) -> dict[str, dict[str, Any]]:
    """The canary's and the lag exporter's Deployments by name."""
    return {n: d for n, d in by_name(objects, "Deployment").items() if n in METRICS_APPS}


def pod(deployment: dict[str, Any]) -> dict[str, Any]:
    return deployment["spec"]["template"]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod(deployment)["spec"]["containers"]
    return only


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


# --- Strimzi: the JMX exporter rules, defined once --------------------------------------

@pytest.mark.parametrize("name", [*RULE_FILES, ALERTS])
def test_the_charts_metric_rules_and_alerts_are_links_to_the_declarations(name):
    # Helm reads no file outside the chart, but follows a link inside it: files/ links
    # to the one definition, so an alert or a rule is edited in one place.
    link, original = CHART_DIR / "files" / name, RULES_DIR / name
    assert link.is_symlink() and link.resolve() == original.resolve(), (
        f"helm/kafka-patterns/files/{name} is not a link to {original.relative_to(ROOT)}, the one definition: "
        f"{RELINK}")


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_kafka_and_connect_export_jmx_metrics_with_the_rules_of_the_configmaps(rendered, variant):
    objects = rendered[variant]
    configmaps = by_name(objects, "ConfigMap")
    exported = [(one(objects, "Kafka")["spec"]["kafka"], "kafka-metrics.yml")]
    exported += [(connect["spec"], "connect-metrics.yml") for connect in kinds(objects, "KafkaConnect")]
    for spec, name in exported:
        config = spec["metricsConfig"]
        assert config["type"] == "jmxPrometheusExporter"
        ref = config["valueFrom"]["configMapKeyRef"]
        assert set(ref) == {"name", "key"}
        # The ConfigMap holds the file as it is: not one byte reformatted.
        assert configmaps[ref["name"]]["data"][ref["key"]] == (RULES_DIR / name).read_text()
        assert ref["key"] == name
    assert len(configmaps) == len(exported)


def test_the_jmx_exporter_rules_can_be_turned_off(helm):
    objects = objects_of(helm, "monitoring.jmxExporter.enabled=false")
    assert "metricsConfig" not in one(objects, "Kafka")["spec"]["kafka"]
    assert "metricsConfig" not in one(objects, "KafkaConnect")["spec"]
    assert not kinds(objects, "ConfigMap")
    # Without Connect, no Connect ConfigMap.
    objects = objects_of(helm, "connect.enabled=false")
    assert [list(c["data"]) for c in kinds(objects, "ConfigMap")] == [["kafka-metrics.yml"]]


@pytest.mark.parametrize("variant", KAFKA_EXPORTER_VARIANTS)
def test_strimzis_kafka_exporter_runs_beside_kafka_with_modest_resources(rendered, variant):
    exporter = one(rendered[variant], "Kafka")["spec"]["kafkaExporter"]
    values = values_of(variant)["monitoring"]["kafkaExporter"]
    assert exporter["topicRegex"] == values["topicRegex"] == ".*"
    assert exporter["groupRegex"] == values["groupRegex"] == ".*"
    resources = exporter["resources"]
    assert resources["requests"]["cpu"] == "50m" and resources["limits"]["memory"] == "128Mi"
    assert "cpu" not in resources["limits"], "a CPU limit throttles the exporter while it scrapes"


def test_the_kafka_exporter_can_be_turned_off(helm):
    assert "kafkaExporter" not in one(objects_of(helm, NO_KAFKA_EXPORTER), "Kafka")["spec"]


@pytest.mark.parametrize("variant", BYO_VARIANTS)
def test_a_brought_kafka_gets_no_strimzi_metrics_objects(rendered, variant):
    assert not kinds(rendered[variant], "ConfigMap")


# --- The lag exporter and the canary -------------------------------------------------------

@pytest.mark.parametrize(("sets", "want"), [
    # One source of kafka_consumergroup_lag: the Kafka Exporter where Strimzi runs it...
    ((), {"canary"}),
    (("monitoring.canary.enabled=false",), set()),
    # ...the lag exporter where it does not.
    ((NO_KAFKA_EXPORTER,), {"canary", "lag-exporter"}),
    (("kafka.external.enabled=true", "kafka.external.bootstrap=b-1.example.com:9096", CANARY_ON),
     {"canary", "lag-exporter"}),
    # Both, when asked; none, when told.
    (("monitoring.lagExporter.enabled=true", CANARY_ON), {"canary", "lag-exporter"}),
    ((NO_KAFKA_EXPORTER, "monitoring.lagExporter.enabled=false", "monitoring.canary.enabled=false"), set()),
])
def test_which_metrics_deployments_run(helm, sets, want):
    objects = objects_of(helm, *sets)
    assert set(metrics_apps(objects)) == want
    # Each with its catalogue user: a KafkaUser on Strimzi (a brought Kafka's owner makes it).
    users = set(by_name(objects, "KafkaUser"))
    if kinds(objects, "Kafka"):
        assert {METRICS_APPS[name][1] for name in want} <= users
    else:
        assert not users


def test_the_clusters_stacks_run_the_canary_and_the_local_cluster_the_lag_exporter_too(rendered):
    assert set(metrics_apps(rendered["dev"])) == set(metrics_apps(rendered["prod"])) == {"canary"}
    # The local stack brings its own Kafka (no Strimzi Kafka Exporter): the lag exporter
    # runs; its canary reads in a group apart from `make up`'s canary's.
    local = metrics_apps(rendered["local"])
    assert set(local) == {"canary", "lag-exporter"}
    default_group = values_of("default")["monitoring"]["canary"]["group"]
    assert option(container(local["canary"])["args"], "--group") != default_group
    assert set(metrics_apps(rendered["default"])) == {"canary"}


@pytest.fixture(scope="module")
def both(helm) -> list[dict[str, Any]]:
    """The default values with the canary and the lag exporter (no Kafka Exporter)."""
    return objects_of(helm, NO_KAFKA_EXPORTER, CANARY_ON)


@pytest.mark.parametrize("name", sorted(METRICS_APPS))
def test_a_metrics_deployment_is_one_pod_serving_on_every_address(both, name):
    deployment = metrics_apps(both)[name]
    assert deployment["spec"]["replicas"] == 1
    # Never two at once, also not during a rollout.
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    c = container(deployment)
    args = c["args"]
    port = values_of("default")["monitoring"]["canary" if name == "canary" else "lagExporter"]["port"]
    assert option(args, "--metrics-port") == str(port)
    # Reachable from Prometheus: the modules' default is 127.0.0.1.
    assert option(args, "--metrics-addr") == "0.0.0.0"
    assert c["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
    assert c["readinessProbe"]["tcpSocket"] == {"port": "metrics"}
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod(deployment)["metadata"]["labels"].items()
    assert selector["app.kubernetes.io/component"] == name


def test_the_lag_exporter_and_the_canary_run_their_modules_with_the_documented_options(both):
    apps = metrics_apps(both)
    assert container(apps["lag-exporter"])["args"] == [
        "kafka_patterns.monitoring.lag_exporter", "--metrics-port", "9465", "--metrics-addr", "0.0.0.0"]
    args = container(apps["canary"])["args"]
    assert args[0] == "kafka_patterns.monitoring.canary"
    assert (option(args, "--topic"), option(args, "--group"), option(args, "--metrics-port")) == \
        ("canary", "canary", "9464")


@pytest.mark.parametrize("name", sorted(METRICS_APPS))
def test_every_argument_the_chart_passes_is_one_the_module_parses(both, name):
    module, _user = METRICS_APPS[name]
    args = container(metrics_apps(both)[name])["args"]
    assert args[0] == module.__name__
    parsed = vars(module.parse_args(args[1:]))
    assert parsed["metrics_addr"] == "0.0.0.0" and parsed["metrics_port"] == int(option(args, "--metrics-port"))


def test_the_lag_exporter_passes_its_group_filter(helm):
    objects = objects_of(helm, NO_KAFKA_EXPORTER, "monitoring.lagExporter.groupsRegex=^w")
    args = container(metrics_apps(objects)["lag-exporter"])["args"]
    assert option(args, "--groups-regex") == "^w"


@pytest.mark.parametrize("name", sorted(METRICS_APPS))
def test_a_metrics_pod_connects_like_a_client_job_as_its_catalogue_user(both, name):
    _module, user = METRICS_APPS[name]
    deployment = metrics_apps(both)[name]
    e = env(container(deployment))
    assert e["KP_KAFKA_USER"]["value"] == user
    assert e["KAFKA_CLIENT_SASL_USERNAME"]["value"] == user
    assert e["KAFKA_CLIENT_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": user, "key": "password"}
    assert "PGPASSWORD" not in e and "KAFKA_PATTERNS_JOB" not in e, "not a job: no job identity, no database"
    # The same Kafka settings, CA and pod hardening as the client jobs (kp.kafkaEnv, kp.pythonPodSpec).
    work_queue = by_name(both, "Deployment")["work-queue"]
    job_env = env(container(work_queue))
    for key in ("KAFKA_BOOTSTRAP_SERVERS", "KAFKA_CLIENT_SECURITY_PROTOCOL", "KAFKA_CLIENT_SASL_MECHANISM",
                "KAFKA_CLIENT_SSL_CA_LOCATION"):
        assert e[key] == job_env[key], key
    for k in ("image", "command", "securityContext", "volumeMounts"):
        assert container(deployment)[k] == container(work_queue)[k], k
    assert pod(deployment)["spec"]["volumes"] == pod(work_queue)["spec"]["volumes"]
    assert pod(deployment)["spec"]["automountServiceAccountToken"] is False


def test_the_metrics_users_are_the_catalogues_with_its_acls(both, cat):
    users = by_name(both, "KafkaUser")
    for _module, user in METRICS_APPS.values():
        (declared,) = [u for u in cat["users"] if u["name"] == user]
        assert user_acls(users[user]) == user_acls({"spec": {"authorization": {"acls": declared["acls"]}}})
        assert users[user]["spec"]["authentication"] == {"type": "scram-sha-512"}
    # The users the chart does not run stay the local path's only.
    others = {u["name"] for u in cat["users"]} - {user for _m, user in METRICS_APPS.values()}
    assert not others & set(users)


def test_the_canary_probes_its_own_catalogue_topic_and_may_drain_on_stop(both, cat):
    values = values_of("default")["monitoring"]["canary"]
    deployment = metrics_apps(both)["canary"]
    args = container(deployment)["args"]
    assert option(args, "--topic") in {t["name"] for t in cat["topics"]}
    assert option(args, "--topic") in {t["spec"]["topicName"] for t in kinds(both, "KafkaTopic")}
    assert option(args, "--grace-seconds") == str(values["graceSeconds"])
    # It waits up to the grace period for delivery reports, then as long for the reads.
    assert pod(deployment)["spec"]["terminationGracePeriodSeconds"] > 2 * values["graceSeconds"]


@pytest.mark.parametrize(("sets", "message"), [
    ([CANARY_ON, "monitoring.canary.topic=nope"], "monitoring.canary.topic: nope is not a catalogue topic"),
    ([CANARY_ON, "monitoring.canary.user=harnes"],
     "the canary runs as Kafka user harnes, which is not a user of the catalogue"),
    (["monitoring.lagExporter.enabled=maybe"], "monitoring/lagExporter/enabled"),
    (["monitoring.podMonitors.enabled=sometimes"], "monitoring/podMonitors/enabled"),
    (["monitoring.canary.port=80"], "monitoring/canary/port"),
])
def test_a_bad_monitoring_value_fails_the_render_naming_it(helm, sets, message):
    proc = template(helm, *sets)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


# --- The Spark drivers ---------------------------------------------------------------------

@pytest.mark.parametrize("variant", SPARK_VARIANTS)
def test_every_spark_driver_declares_its_metrics_port_and_is_told_it(rendered, variant):
    port = values_of(variant)["monitoring"]["sparkDrivers"]["port"]
    assert port == 9466
    specs = app_specs(rendered[variant])
    assert specs
    for spec in specs.values():
        # spark-operator's driver.ports: name, containerPort and protocol are all required.
        assert spec["driver"]["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
        e = env(spec["driver"])
        assert e["KP_METRICS_PORT"]["value"] == str(port)
        # kafka_patterns.runtime.streaming_metrics serves on 127.0.0.1 unless told otherwise.
        assert e["KP_METRICS_ADDR"]["value"] == "0.0.0.0"
        assert "ports" not in spec["executor"]
        assert not {"KP_METRICS_PORT", "KP_METRICS_ADDR"} & set(env(spec["executor"]))


# --- PodMonitors ---------------------------------------------------------------------------

def test_podmonitors_render_only_where_the_cluster_serves_the_api(helm):
    # auto (values.yaml): `helm install` on a cluster without the CRD (the local test
    # cluster) renders none, so it cannot fail on them; with the API, all of them.
    assert values_of("default")["monitoring"]["podMonitors"]["enabled"] == "auto"
    assert not kinds(objects_of(helm), "PodMonitor")
    assert kinds(objects_of(helm, api_versions=(PODMONITOR_API,)), "PodMonitor")
    assert not kinds(objects_of(helm, "monitoring.podMonitors.enabled=false", api_versions=(PODMONITOR_API,)),
                     "PodMonitor")
    assert kinds(objects_of(helm, PODMONITORS_ON), "PodMonitor")


@pytest.mark.parametrize("variant", VARIANTS)
def test_podmonitors_match_the_pinned_crd(monitored, crd_validators, variant):
    monitors = kinds(monitored[variant], "PodMonitor")
    assert monitors
    validator = crd_validators[("monitoring.coreos.com/v1", "PodMonitor")]
    errors = [f"{m['metadata']['name']}: {'/'.join(map(str, e.absolute_path))}: {e.message}"
              for m in monitors for e in validator.iter_errors(m)]
    assert not errors, "\n".join(errors)


def test_the_podmonitor_check_catches_an_unknown_field(monitored, crd_validators):
    monitor = kinds(monitored["default"], "PodMonitor")[0]
    # A Pod's field, not a PodMonitor's: the API server rejects it.
    endpoint = {**monitor["spec"]["podMetricsEndpoints"][0], "containerPort": 9466}
    bad = {**monitor, "spec": {**monitor["spec"], "podMetricsEndpoints": [endpoint]}}
    assert list(crd_validators[("monitoring.coreos.com/v1", "PodMonitor")].iter_errors(bad))


@pytest.mark.parametrize("variant", STRIMZI_VARIANTS)
def test_strimzis_pods_are_scraped_on_its_metrics_port_by_its_labels(monitored, variant):
    objects = monitored[variant]
    cluster = one(objects, "Kafka")["metadata"]["name"]
    connect = connect_name(objects)
    monitors = by_name(objects, "PodMonitor")
    # Strimzi labels each pod strimzi.io/cluster (its resource), /kind, /name (<resource>-<component>).
    want = {f"{cluster}-kafka": {"strimzi.io/cluster": cluster, "strimzi.io/kind": "Kafka",
                                 "strimzi.io/name": f"{cluster}-kafka"},
            connect: {"strimzi.io/cluster": connect, "strimzi.io/kind": "KafkaConnect",
                      "strimzi.io/name": f"{connect}-connect"},
            f"{cluster}-kafka-exporter": {"strimzi.io/cluster": cluster, "strimzi.io/kind": "Kafka",
                                          "strimzi.io/name": f"{cluster}-kafka-exporter"}}
    if connect is None:
        del want[None]
    if variant not in KAFKA_EXPORTER_VARIANTS:
        del want[f"{cluster}-kafka-exporter"]
    assert set(monitors) >= set(want)
    for name, selector in want.items():
        spec = monitors[name]["spec"]
        assert spec["selector"] == {"matchLabels": selector}, name
        (endpoint,) = spec["podMetricsEndpoints"]
        assert (endpoint["port"], endpoint["path"]) == (STRIMZI_METRICS_PORT, "/metrics")
        # Strimzi's dashboards select on strimzi_io_* and kubernetes_pod_name.
        assert {r.get("targetLabel") or r["action"] for r in endpoint["relabelings"]} >= {
            "labelmap", "kubernetes_pod_name"}
        assert "namespaceSelector" not in spec, "its own namespace, the release's"


def test_each_monitor_of_ours_selects_pods_that_serve_its_port(helm):
    objects = objects_of(helm, PODMONITORS_ON, NO_KAFKA_EXPORTER, CANARY_ON)
    monitors = by_name(objects, "PodMonitor")
    assert {"spark-drivers", "lag-exporter", "canary"} <= set(monitors)
    assert "patterns-kafka-exporter" not in monitors
    for name, deployment in metrics_apps(objects).items():
        spec = monitors[name]["spec"]
        selected = {n for n, d in by_name(objects, "Deployment").items()
                    if spec["selector"]["matchLabels"].items() <= pod(d)["metadata"]["labels"].items()}
        # Its own pods only.
        assert selected == {name}
        (endpoint,) = spec["podMetricsEndpoints"]
        assert endpoint["port"] in {p["name"] for p in container(deployment)["ports"]}
    spark = monitors["spark-drivers"]["spec"]
    selector = dict(spark["selector"]["matchLabels"])
    # Spark labels a driver pod spark-role: driver (an executor: executor, and it serves nothing).
    assert selector.pop("spark-role") == "driver"
    (endpoint,) = spark["podMetricsEndpoints"]
    for spec in app_specs(objects).values():
        assert selector.items() <= spec["driver"]["labels"].items()
        assert endpoint["port"] in {p["name"] for p in spec["driver"]["ports"]}


def test_the_local_cluster_would_scrape_its_spark_drivers_and_exporters(monitored):
    assert sorted(by_name(monitored["local"], "PodMonitor")) == ["canary", "lag-exporter", "spark-drivers"]


def test_podmonitors_carry_the_labels_and_interval_of_the_values(helm):
    objects = objects_of(helm, PODMONITORS_ON, "monitoring.podMonitors.labels.release=prometheus",
                         "monitoring.podMonitors.interval=15s")
    for monitor in kinds(objects, "PodMonitor"):
        assert monitor["metadata"]["labels"]["release"] == "prometheus"
        assert monitor["metadata"]["labels"]["app.kubernetes.io/part-of"] == "kafka-patterns"
        assert [e["interval"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["15s"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_helm_lint_is_clean_with_the_podmonitors(helm, variant):
    values = render_tool.values_files()[variant]
    proc = subprocess.run([str(helm), "lint", "--strict", str(CHART_DIR), "--namespace", NAMESPACE,
                           *render_tool.helm_args(values), "--set", PODMONITORS_ON],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout, proc.stdout


def test_the_pinned_prometheus_operator_crds_are_that_version(versions):
    crd_dir = REPO_CRD_DIR / f"prometheus-operator-{versions['prometheus_operator_version']}"
    files = sorted(p.name for p in crd_dir.glob("*.yaml"))
    assert "monitoring.coreos.com_podmonitors.yaml" in files
    for name in files:
        crd = yaml.safe_load((crd_dir / name).read_text())
        # controller-gen stamps each CRD with the operator release it comes from.
        assert crd["metadata"]["annotations"]["operator.prometheus.io/version"] == \
            versions["prometheus_operator_version"], name
    assert (crd_dir / "LICENSE").is_file(), "Apache-2.0: the license travels with the copies"


# --- the alerting rules as a PrometheusRule ---------------------------------------------

def test_the_charts_alert_rules_are_the_ansible_roles_byte_for_byte():
    chart_copy, original = CHART_DIR / "files" / ALERTS, RULES_DIR / ALERTS
    assert chart_copy.read_bytes() == original.read_bytes(), (
        f"helm/kafka-patterns/files/{ALERTS} differs from {original.relative_to(ROOT)}: "
        f"cp {original.relative_to(ROOT)} helm/kafka-patterns/files/")


def test_the_prometheusrule_renders_only_where_the_cluster_serves_the_api(helm):
    assert values_of("default")["monitoring"]["prometheusRule"]["enabled"] == "auto"
    assert not kinds(objects_of(helm), "PrometheusRule")
    assert kinds(objects_of(helm, api_versions=(PROMETHEUSRULE_API,)), "PrometheusRule")
    assert not kinds(objects_of(helm, "monitoring.prometheusRule.enabled=false", api_versions=(PROMETHEUSRULE_API,)),
                     "PrometheusRule")


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_prometheusrule_holds_the_tested_rules_and_matches_the_pinned_crd(helm, crd_validators, variant):
    (rule,) = kinds(objects_of(helm, RULE_ON, "monitoring.prometheusRule.labels.release=prometheus", variant=variant),
                    "PrometheusRule")
    # The very groups promtool tests (not a re-typed copy), with Prometheus' templates untouched.
    assert rule["spec"] == yaml.safe_load((RULES_DIR / ALERTS).read_text())
    assert rule["metadata"]["labels"]["release"] == "prometheus"
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in crd_validators[("monitoring.coreos.com/v1", "PrometheusRule")].iter_errors(rule)]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_podmonitor_gives_its_targets_the_job_name_the_rules_and_dashboards_use(monitored, variant):
    """up{job="kafka"} (KafkaNodeDown) and the dashboards' job selectors hold on Kubernetes too."""
    jobs = {}
    for monitor in kinds(monitored[variant], "PodMonitor"):
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        if endpoint.get("honorLabels"):  # the Spark drivers: their metrics carry the job's name
            continue
        (job,) = [r["replacement"] for r in endpoint["relabelings"] if r.get("targetLabel") == "job"]
        jobs[monitor["metadata"]["name"]] = job
    assert set(jobs.values()) <= {"kafka", "connect", "kafka-exporter", "lag-exporter", "canary"}, jobs
    if kinds(monitored[variant], "Kafka"):
        assert "kafka" in jobs.values(), jobs
    if kinds(monitored[variant], "KafkaConnect"):
        assert "connect" in jobs.values(), jobs

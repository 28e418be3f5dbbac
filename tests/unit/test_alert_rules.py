"""The alerting rules (catalogue/metrics/alerts.yml): valid for Prometheus,
unit-tested with `promtool test rules`, every alert the platform promises present with a
severity, a summary and a description, and every metric they use produced under that
name by the JMX exporter rules beside them (Strimzi's, so Strimzi's dashboards fit too)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, jmx_export

FILES = ROOT / "catalogue" / "metrics"
ALERTS = FILES / "alerts.yml"
ALERTS_TEST = FILES / "alerts_test.yml"

# alert -> the metric its expression must use
REQUIRED_ALERTS = {
    "UnderReplicatedPartitions": "kafka_server_replicamanager_underreplicatedpartitions",
    "OfflinePartitions": "kafka_controller_kafkacontroller_offlinepartitionscount",
    "UnderMinIsrPartition": "kafka_cluster_partition_underminisr",
    "AbnormalControllerState": "kafka_controller_kafkacontroller_activecontrollercount",
    "ConsumerGroupLagGrowing": "kafka_consumergroup_lag",
    "ConnectFailedTask": "kafka_connect_connector_task_status",
    "CanaryRecordsLost": "kafka_patterns_canary_records_lost_total",
}

# What the JMX exporter matches a rule against ("domain<bean properties><>attribute: value")
# -> the metric name and labels the rules must produce, for every JMX metric an alert uses.
JMX_SAMPLES = [
    ("kafka-metrics.yml", "kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value: 0",
     "kafka_server_replicamanager_underreplicatedpartitions", {}),
    ("kafka-metrics.yml", "kafka.controller<type=KafkaController, name=OfflinePartitionsCount><>Value: 0",
     "kafka_controller_kafkacontroller_offlinepartitionscount", {}),
    ("kafka-metrics.yml", "kafka.controller<type=KafkaController, name=ActiveControllerCount><>Value: 1",
     "kafka_controller_kafkacontroller_activecontrollercount", {}),
    ("kafka-metrics.yml",
     "kafka.cluster<type=Partition, name=UnderMinIsr, topic=weather.readings, partition=3><>Value: 0",
     "kafka_cluster_partition_underminisr", {"topic": "weather.readings", "partition": "3"}),
    ("connect-metrics.yml", "kafka.connect<type=connector-task-metrics, connector=pg-source, task=0><>status: failed",
     "kafka_connect_connector_task_status", {"connector": "pg-source", "task": "0", "status": "failed"}),
]


def promtool() -> str:
    path = shutil.which("promtool") or ("/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None)
    if path is None:
        pytest.fail("promtool not found: run `make setup` (it installs Debian's prometheus package, "
                    "which ships /usr/bin/promtool)", pytrace=False)
    return path


def run_promtool(*args: str) -> None:
    proc = subprocess.run([promtool(), *args], cwd=FILES, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"promtool {' '.join(args)} failed (in {FILES}):\n{proc.stdout}{proc.stderr}", pytrace=False)


def alert_rules() -> dict[str, dict]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


def test_promtool_checks_the_rules():
    run_promtool("check", "rules", ALERTS.name)


def test_promtool_unit_tests_pass():
    run_promtool("test", "rules", ALERTS_TEST.name)


@pytest.mark.parametrize(("alert", "metric"), REQUIRED_ALERTS.items())
def test_every_required_alert_exists(alert, metric):
    rules = alert_rules()
    assert alert in rules, f"{ALERTS} has no alert {alert} (it has {sorted(rules)})"
    assert re.search(rf"\b{metric}\b", rules[alert]["expr"]), f"{alert} does not use {metric}: {rules[alert]['expr']}"


def test_every_alert_has_severity_summary_and_description():
    for name, rule in alert_rules().items():
        assert rule.get("labels", {}).get("severity") in {"warning", "critical"}, f"{name}: severity"
        for key in ("summary", "description"):
            assert str(rule.get("annotations", {}).get(key, "")).strip(), f"{name}: no {key} annotation"


def test_every_alert_is_tested_firing_and_quiet():
    cases: dict[str, list[bool]] = {}
    for test in yaml.safe_load(ALERTS_TEST.read_text())["tests"]:
        for case in test.get("alert_rule_test", []):
            cases.setdefault(case["alertname"], []).append(bool(case.get("exp_alerts")))
    for name in alert_rules():
        assert True in cases.get(name, []), f"{ALERTS_TEST.name} has no case where {name} fires"
        assert False in cases.get(name, []), f"{ALERTS_TEST.name} has no case where {name} stays quiet"


@pytest.mark.parametrize(("rules_file", "sample", "metric", "labels"), JMX_SAMPLES,
                         ids=[metric for _, _, metric, _ in JMX_SAMPLES])
def test_the_jmx_rules_produce_the_names_the_alerts_use(rules_file, sample, metric, labels):
    exported = jmx_export(yaml.safe_load((FILES / rules_file).read_text()), sample)
    assert exported == (metric, labels), f"{rules_file} turns {sample!r} into {exported}"
    assert metric in REQUIRED_ALERTS.values()

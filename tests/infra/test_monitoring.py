"""The monitoring of the local default (role monitoring): Prometheus,
the delivery canary and the lag exporter run as services of `make up`, and Prometheus
scrapes every part and has loaded the alerting rules promtool tests."""

from __future__ import annotations

import pytest
from monitoring_checks import (
    assert_every_target_up,
    assert_the_canary_delivers_and_loses_nothing,
    assert_the_tested_alerts_loaded,
    prometheus_of,
)

from helpers import ROOT
from kafka_patterns.clients import kafka
from kafka_patterns.clients.prometheus import instant
from kafka_patterns.config import inventory

testinfra_hosts = ["ansible://monitoring"]


@pytest.fixture(scope="module")
def prometheus() -> str:
    return prometheus_of(inventory.load())


@pytest.mark.parametrize("service", ["prometheus", "canary", "lag-exporter"])
def test_the_service_runs_under_its_pid_file(host, service):
    pid_file = f"{ROOT}/.run/monitoring/{service}.pid"
    assert host.file(pid_file).exists, f"no pid file {pid_file}: is the monitoring started (make up)?"
    pid = host.file(pid_file).content_string.strip()
    assert host.run(f"kill -0 {pid}").rc == 0, f"{service} (pid {pid}) is not running"


def test_prometheus_scrapes_every_node_worker_and_exporter(prometheus):
    assert_every_target_up(prometheus, inventory.load())


def test_prometheus_has_loaded_every_alert_of_the_tested_rule_file(prometheus):
    assert_the_tested_alerts_loaded(prometheus)


def test_the_canary_delivers_and_loses_nothing(prometheus):
    assert_the_canary_delivers_and_loses_nothing(prometheus)


def test_the_lag_exporter_reports_the_canary_group(prometheus):
    """The lag exporter lists the canary's consumer group with a lag per partition."""
    kafka.wait_until(lambda: instant(prometheus, 'count(kafka_consumergroup_lag{consumergroup="canary"})'),
                       timeout=90, interval=1, what="the canary group's lag in Prometheus")

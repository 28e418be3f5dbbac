"""The monitoring of the hosts topology (role monitoring on the control machine, the
inventory's `monitoring` group): Prometheus, the canary and the lag exporter listen on
the bridge address only; Prometheus scrapes every node and worker on its host's
address; the canary, there through the broker faults of `make test-hosts-chaos`, has
lost nothing."""

from __future__ import annotations

import subprocess

import pytest
from hosts_topology import CONTROL_ADDRESS, HOSTS_DIR, INVENTORY, MONITORING_HOST
from monitoring_checks import (
    assert_every_target_up,
    assert_the_canary_delivers_and_loses_nothing,
    assert_the_tested_alerts_loaded,
    prometheus_of,
)

from kafka_patterns.clients.prometheus import api, instant
from kafka_patterns.config import inventory

MONITORING_DIR = HOSTS_DIR / MONITORING_HOST / "monitoring"
SERVICES = ("prometheus", "canary", "lag-exporter")


@pytest.fixture(scope="module")
def cluster() -> inventory.Cluster:
    return inventory.load(INVENTORY)


@pytest.fixture(scope="module")
def prometheus(cluster) -> str:
    return prometheus_of(cluster)


def service_pid(service: str) -> str:
    pid_file = MONITORING_DIR / f"{service}.pid"
    assert pid_file.is_file(), f"no pid file {pid_file}: is the monitoring of the hosts started (make hosts-up)?"
    return pid_file.read_text().strip()


@pytest.mark.parametrize("service", SERVICES)
def test_the_service_runs_under_its_pid_file(service):
    pid = service_pid(service)
    assert subprocess.run(["kill", "-0", pid], check=False).returncode == 0, f"{service} (pid {pid}) is not running"


def test_the_services_listen_on_the_bridge_address_only(cluster):
    ports = {port for _, _, port in cluster.monitoring}
    listeners = subprocess.run(["ss", "-H", "-t", "-l", "-n"], capture_output=True, text=True,
                               check=True).stdout.splitlines()
    held = {line.split()[3] for line in listeners if int(line.split()[3].rsplit(":", 1)[1]) in ports}
    assert {f"{host}:{port}" for _, host, port in cluster.monitoring} <= held, held
    assert {host for _, host, _ in cluster.monitoring} == {CONTROL_ADDRESS}
    # Not on every address (the local default's own services may hold 127.0.0.1 meanwhile).
    assert not {a for a in held if a.rsplit(":", 1)[0] in ("0.0.0.0", "*", "[::]")}, held


def test_prometheus_scrapes_every_node_and_worker_on_its_host(prometheus, cluster):
    assert_every_target_up(prometheus, cluster)
    scraped = {t["labels"]["instance"].split(":")[0] for t in api(prometheus, "targets")["activeTargets"]
               if t["labels"]["job"] in ("kafka", "connect")}
    workers = {url.split("//")[1].split(":")[0] for url in cluster.connect_urls}
    assert scraped == {n.host for n in cluster.nodes} | workers


def test_prometheus_has_loaded_every_alert_of_the_tested_rule_file(prometheus):
    assert_the_tested_alerts_loaded(prometheus)


def test_the_canary_lost_nothing_through_the_broker_faults(prometheus):
    consumed = assert_the_canary_delivers_and_loses_nothing(prometheus)
    counts = {what: instant(prometheus, f"sum(kafka_patterns_canary_records_{what}_total)")
              for what in ("produced", "acked", "failed", "duplicated", "reordered")}
    print(f"canary on the hosts: {consumed:.0f} consumed, {counts}")
    assert counts["duplicated"] == 0, counts

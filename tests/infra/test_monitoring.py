"""The monitoring of the local default and the hosts path (role monitoring): Prometheus,
the delivery canary and the lag exporter run as services of `make up`, and Prometheus
scrapes every part and has loaded the alerting rules promtool tests."""

from __future__ import annotations

import pytest
import yaml

from helpers import ROOT
from kafka_patterns import clients, inventory
from kafka_patterns.prometheus_api import api, instant

testinfra_hosts = ["ansible://monitoring"]

ALERTS = ROOT / "ansible" / "roles" / "kafka_metrics" / "files" / "alerts.yml"
# Every scrape job of role monitoring's prometheus.yml that has a target at all times
# (the Spark jobs announce themselves only while they run).
ALWAYS_SCRAPED = {"prometheus", "kafka", "connect", "canary", "lag-exporter"}


@pytest.fixture(scope="module")
def prometheus() -> str:
    url = inventory.load().prometheus_url
    if url is None:
        pytest.skip("the inventory has no monitoring host")
    return url


@pytest.mark.parametrize("service", ["prometheus", "canary", "lag-exporter"])
def test_the_service_runs_under_its_pid_file(host, service):
    pid_file = f"{ROOT}/.run/monitoring/{service}.pid"
    assert host.file(pid_file).exists, f"no pid file {pid_file}: is the monitoring started (make up)?"
    pid = host.file(pid_file).content_string.strip()
    assert host.run(f"kill -0 {pid}").rc == 0, f"{service} (pid {pid}) is not running"


def test_prometheus_scrapes_every_node_worker_and_exporter(prometheus):
    """Each Kafka node and Connect worker of the inventory, the canary, the lag exporter
    and Prometheus itself are targets, and every one answers its scrapes."""
    cluster = inventory.load()
    expected = {"kafka": len(cluster.nodes), "connect": len(cluster.connect_urls),
                "canary": 1, "lag-exporter": 1, "prometheus": 1}

    def all_up() -> list[dict] | None:
        targets = [t for t in api(prometheus, "targets")["activeTargets"] if t["labels"]["job"] in ALWAYS_SCRAPED]
        counts = {job: sum(t["labels"]["job"] == job for t in targets) for job in expected}
        return targets if counts == expected and all(t["health"] == "up" for t in targets) else None

    try:
        clients.wait_until(all_up, timeout=60, interval=1, what="every target to be scraped up")
    except TimeoutError:
        targets = api(prometheus, "targets")["activeTargets"]
        pytest.fail("targets not up: " + "; ".join(f"{t['labels']['job']} {t['scrapeUrl']}: {t['health']} "
                                                    f"{t.get('lastError', '')}" for t in targets
                                                    if t["health"] != "up") + f" (expected {expected})")


def test_prometheus_has_loaded_every_alert_of_the_tested_rule_file(prometheus):
    wanted = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"] if "alert" in r}
    loaded = {r["name"] for g in api(prometheus, "rules", type="alert")["groups"] for r in g["rules"]}
    assert loaded == wanted, f"loaded {sorted(loaded)}, {ALERTS.name} has {sorted(wanted)}"


def test_the_canary_delivers_and_loses_nothing(prometheus):
    """The canary service produces and reads back through the cluster, as Prometheus sees it."""
    consumed = clients.wait_until(
        lambda: (v := instant(prometheus, "sum(kafka_patterns_canary_records_consumed_total)")) and v > 0 and v,
        timeout=90, interval=1, what="the canary's first consumed records in Prometheus")
    lost = instant(prometheus, "sum(kafka_patterns_canary_records_lost_total)")
    assert lost == 0, f"the canary lost {lost} records ({consumed:.0f} consumed)"


def test_the_lag_exporter_reports_the_canary_group(prometheus):
    """The lag exporter lists the canary's consumer group with a lag per partition."""
    clients.wait_until(lambda: instant(prometheus, 'count(kafka_consumergroup_lag{consumergroup="canary"})'),
                       timeout=90, interval=1, what="the canary group's lag in Prometheus")

"""What the monitoring tests of each path (tests/infra locally, tests/hosts on the test
hosts) ask role monitoring's Prometheus: every target up, the tested alerts loaded, the
canary delivering without a loss."""

from __future__ import annotations

import pytest
import yaml

from helpers import ROOT
from kafka_patterns.clients import kafka
from kafka_patterns.clients.prometheus import api, instant
from kafka_patterns.config.inventory import Cluster

ALERTS = ROOT / "catalogue" / "metrics" / "alerts.yml"
# Every scrape job of role monitoring's prometheus.yml that has a target at all times
# (the Spark jobs announce themselves only while they run).
ALWAYS_SCRAPED = {"prometheus", "kafka", "connect", "canary", "lag-exporter"}


def prometheus_of(cluster: Cluster) -> str:
    if cluster.prometheus_url is None:
        pytest.skip("the inventory has no monitoring host")
    return cluster.prometheus_url


def assert_every_target_up(prometheus: str, cluster: Cluster, timeout: float = 60) -> None:
    """Each Kafka node and Connect worker of the inventory, the canary, the lag exporter
    and Prometheus itself are targets, and every one answers its scrapes."""
    expected = {"kafka": len(cluster.nodes), "connect": len(cluster.connect_urls),
                "canary": 1, "lag-exporter": 1, "prometheus": 1}

    def all_up() -> list[dict] | None:
        targets = [t for t in api(prometheus, "targets")["activeTargets"] if t["labels"]["job"] in ALWAYS_SCRAPED]
        counts = {job: sum(t["labels"]["job"] == job for t in targets) for job in expected}
        return targets if counts == expected and all(t["health"] == "up" for t in targets) else None

    try:
        kafka.wait_until(all_up, timeout=timeout, interval=1, what="every target to be scraped up")
    except TimeoutError:
        targets = api(prometheus, "targets")["activeTargets"]
        pytest.fail("targets not up: " + "; ".join(f"{t['labels']['job']} {t['scrapeUrl']}: {t['health']} "
                                                    f"{t.get('lastError', '')}" for t in targets
                                                    if t["health"] != "up") + f" (expected {expected})")


def assert_the_tested_alerts_loaded(prometheus: str) -> None:
    wanted = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"] if "alert" in r}
    loaded = {r["name"] for g in api(prometheus, "rules", type="alert")["groups"] for r in g["rules"]}
    assert loaded == wanted, f"loaded {sorted(loaded)}, {ALERTS.name} has {sorted(wanted)}"


def assert_the_canary_delivers_and_loses_nothing(prometheus: str) -> float:
    """The canary service produces and reads back through the cluster, as Prometheus
    sees it; returns how many records it has consumed."""
    consumed = kafka.wait_until(
        lambda: (v := instant(prometheus, "sum(kafka_patterns_canary_records_consumed_total)")) and v > 0 and v,
        timeout=90, interval=1, what="the canary's first consumed records in Prometheus")
    lost = instant(prometheus, "sum(kafka_patterns_canary_records_lost_total)")
    assert lost == 0, f"the canary lost {lost} records ({consumed:.0f} consumed)"
    return consumed

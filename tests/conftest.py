"""Fixtures shared by every tier: the catalogue and the local cluster as the inventory describes it."""

from __future__ import annotations

import os
import sys

import pytest

from helpers import LOCAL_INVENTORY, ROOT

sys.path.insert(0, str(ROOT / "spark-jobs" / "src"))

from kafka_patterns.config import catalogue, inventory
from pattern_harness import job_processes

# A tier's Spark driver runs many small jobs for a few minutes, as make demo's does:
# C1 alone compiles what they need (platform_cli.demo).
os.environ.setdefault("KP_DRIVER_JAVA_OPTIONS", job_processes.SHORT_LIVED_JVM_OPTIONS)


@pytest.fixture(scope="session")
def cluster() -> inventory.Cluster:
    c = inventory.load(LOCAL_INVENTORY)
    down = [f"{what} {h}:{p}" for what, h, p in c.endpoints() if not inventory.listening(h, p)]
    if down:
        pytest.fail("the local cluster is not up (run `make up`): not listening: " + ", ".join(down))
    return c


@pytest.fixture(scope="session")
def cat() -> dict:
    return catalogue.load()


FAILED_LOG = ROOT / ".run" / "logs" / "failed-tests.log"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Append each failure to .run/logs/failed-tests.log, so `make test` can list every
    tier's failures at its end (a CI log keeps only its tail)."""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        reason = crash.message.splitlines()[0][:300] if crash and crash.message else report.when
        FAILED_LOG.parent.mkdir(parents=True, exist_ok=True)
        with FAILED_LOG.open("a") as log:
            log.write(f"{report.nodeid}: {reason}\n")

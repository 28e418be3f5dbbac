"""Broker faults while Kafka's VerifiableProducer writes with acks=all and idempotence:
nothing acknowledged may be lost or duplicated, whatever the fault. Each scenario runs
CHAOS_RUNS times (default 1: `make test`; `make test-chaos` runs the full set) with at
least CHAOS_RECORDS acknowledged records per run (default 100,000)."""

from __future__ import annotations

import os

import pytest

from kafka_patterns.config import inventory
from pattern_harness import broker_faults, chaos

RUNS = int(os.environ.get("CHAOS_RUNS", "1"))
RECORDS = int(os.environ.get("CHAOS_RECORDS", "100000"))


@pytest.fixture(scope="module")
def chaos_cluster() -> inventory.Cluster:
    cluster = inventory.load()
    down = [f"{what} {h}:{p}" for what, h, p in cluster.endpoints() if not inventory.listening(h, p)]
    if down:
        pytest.fail(f"the cluster of {inventory.inventory_path()} is not up: not listening: {', '.join(down)}")
    return cluster


# A run's own waits are bounded (pattern_harness.chaos: the rolling restart alone may take
# 30 min on a loaded host), so pytest's default 900 s would cut a slow restart short.
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("run", range(1, RUNS + 1), ids=lambda r: f"run{r}")
@pytest.mark.parametrize("scenario", list(chaos.SCENARIOS))
def test_no_acknowledged_record_is_lost_or_duplicated(chaos_cluster, scenario, run):
    if scenario == "leader network partition 30 s":
        try:
            broker_faults.netns(chaos_cluster.nodes[0])
        except broker_faults.FaultUnsupported as e:
            pytest.skip(str(e))
    result = chaos.run(scenario, records=RECORDS)
    assert result.acked >= RECORDS
    assert result.lost == 0, f"{result.lost} acknowledged records lost ({scenario}, run {result.run})"
    assert result.duplicated == 0, f"{result.duplicated} duplicates despite idempotence ({scenario})"
    if scenario.startswith("two brokers down"):
        # Below min.insync.replicas nothing is acknowledged: the writes wait, they are not lost.
        assert result.longest_stall_s >= chaos.HOLD_SECONDS * 0.8, result

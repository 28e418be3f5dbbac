"""Every panel of the Grafana dashboards (catalogue/metrics/dashboards) shows data
from the live local Prometheus: each target's PromQL, over the last 10 minutes, returns a
series with a number in it. Panels marked kafkaPatterns.dataOnlyWhen (a Spark streaming
query, a Connect connector) are held to it only while their condition has data too; the
others must show data on a healthy platform (the convention: kafka_patterns.monitoring.dashboard).

Needs the platform's monitoring (make up: Prometheus, the canary, the lag exporter); it is
skipped, saying so, only when the inventory has no monitoring host."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from helpers import LOCAL_INVENTORY, one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, inventory
from kafka_patterns.monitoring.dashboard import Dashboard, QueryError, Series, load_dashboards, query_range
from pattern_harness import generator, job_runs

WINDOW = 600  # seconds: the last 10 minutes
STEP = 15
BOARDS = load_dashboards(range_seconds=WINDOW)


@pytest.fixture(scope="module")
def prometheus() -> str:
    """The inventory's Prometheus (prometheus_port of the monitoring host)."""
    url = inventory.load(LOCAL_INVENTORY).prometheus_url
    if url is None:
        pytest.skip("the inventory has no monitoring host: no Prometheus to ask")
    address = urlsplit(url)
    if not inventory.listening(address.hostname, address.port or 80):
        pytest.fail(f"nothing listens at {url}: make up starts Prometheus (role monitoring)")
    return url


def with_data(prometheus: str, expr: str) -> list[Series]:
    end = time.time()
    return [s for s in query_range(prometheus, expr, end - WINDOW, end, STEP) if s.has_data]


# A stateful streaming job with a watermark, fed from its own topic: what the Spark
# panels chart. The tier's other job processes come and go (killed, or done in seconds)
# and may never be scraped with a micro-batch behind them.
STREAMING_JOB = "sql-station-heat-windows"
# Its readings would move the event time of a sql-stream run reading the same topic.
pytestmark = one_run_at_a_time("sql-stream")


@pytest.fixture(scope="module")
def a_streaming_job(prometheus):
    """The job as its own process serving its metrics (as a scenario's job processes do
    while the local monitoring runs), until Prometheus has scraped its micro-batches."""
    topic = catalogue.job(STREAMING_JOB).inputs[0]
    run = job_runs.new_run()
    starting = job_runs.end_offsets([topic])
    job = job_runs.spawn_job(STREAMING_JOB, job_runs.job_args(STREAMING_JOB, run, starting, bounded=False),
                           job_runs.job_log(STREAMING_JOB, run))
    try:
        def scraped() -> bool:
            assert job.alive(), f"{STREAMING_JOB} exited: {job.log_tail()}"
            generator.produce(topic, 50, run=run)
            selector = f'{{job="{STREAMING_JOB}"}}'
            return all(with_data(prometheus, expr) for expr in (
                f"kafka_patterns_streaming_state_rows{selector}",
                f"rate(kafka_patterns_streaming_batches_total{selector}[1m])"))  # a rate: two scrapes
        kafka.wait_until(scraped, 180, interval=2, what=f"Prometheus to scrape {STREAMING_JOB}'s micro-batches twice")
        yield
    finally:
        job.stop()


@pytest.mark.parametrize("board", BOARDS, ids=[b.uid for b in BOARDS])
def test_every_panel_has_data(prometheus, a_streaming_job, board: Dashboard):
    missing, waived = [], []
    for panel in board.panels:
        when = panel.data_only_when
        try:
            if when and not with_data(prometheus, when.expr):
                waived.append(f"{panel.title} (data only while {when.description})")
                continue
        except QueryError as e:
            missing.append(f"{panel.title}: its dataOnlyWhen refused by Prometheus ({e}): {when.expr}")
            continue
        for target in panel.targets:
            try:
                if not with_data(prometheus, target.expr):
                    missing.append(f"{panel.title} [{target.ref}] no data: {target.expr}")
            except QueryError as e:
                missing.append(f"{panel.title} [{target.ref}] refused by Prometheus ({e}): {target.expr}")
    if waived:
        print(f"{board.title}: not required now: " + "; ".join(waived))
    assert not missing, (f"{board.title} ({board.path.name}): {len(missing)} panel target(s) without data in the "
                         f"last {WINDOW // 60} minutes at {prometheus}:\n  " + "\n  ".join(missing))

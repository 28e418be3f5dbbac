"""Streaming progress of a Spark job as Prometheus metrics: input and processing rates,
batch duration, state rows and the watermark of each query, labelled job and query.

A StreamingQueryListener registered on the session turns each query's progress events
into gauges of a registry of its own, served by prometheus-client (runtime.metrics_server)
on KP_METRICS_ADDR (default 127.0.0.1; a pod needs 0.0.0.0) port KP_METRICS_PORT (0: any
free port). Unset or empty, nothing is registered and nothing served. With
KP_PROMETHEUS_SD_DIR set, the server's address is written there as a Prometheus file_sd
target, <job>-<pid>.json, removed at interpreter exit: locally the jobs are short-lived
and on ports chosen at start, so Prometheus finds them through the files.

Why a listener and not Spark's PrometheusServlet: the servlet's metric names carry the
application id and the query name (a new name every run, nothing to select by label),
it is served by the Spark UI, which local runs turn off, and it needs
spark.sql.streaming.metricsEnabled. The listener sees what StreamingQuery.lastProgress
shows, under stable names with job and query labels.
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import logging
import os
import re
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge
from pyspark.sql import SparkSession
from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)

from kafka_patterns.runtime import metrics_server

log = logging.getLogger("kafka_patterns.runtime.streaming_metrics")
PORT_VARIABLE = "KP_METRICS_PORT"
ADDR_VARIABLE = "KP_METRICS_ADDR"
SD_DIR_VARIABLE = "KP_PROMETHEUS_SD_DIR"
PREFIX = "kafka_patterns_streaming_"
LABELS = ("job", "query")


class StreamingMetricsError(Exception):
    """A wrong KP_METRICS_* setting or a busy port; the message names the variable."""


def _epoch_seconds(iso: str) -> float:
    """Spark's progress timestamps: ISO 8601 in UTC, '2026-01-01T00:00:00.000Z'."""
    return dt.datetime.fromisoformat(iso).timestamp()


class ProgressMetrics(StreamingQueryListener):
    """The gauges of one job's queries, updated from the session's query events (called
    on Spark's listener thread, through py4j)."""

    def __init__(self, job: str, registry: CollectorRegistry | None = None) -> None:
        self.job, self.registry = job, registry or CollectorRegistry()
        self._queries: dict[uuid.UUID, str] = {}  # id -> label: a terminated event has no name

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(PREFIX + name, doc, LABELS, registry=self.registry)

        self.input_rate = gauge("input_rows_per_second", "Rate at which rows arrived, last micro-batch")
        self.processed_rate = gauge("processed_rows_per_second", "Rate at which rows were processed, last micro-batch")
        self.batch_duration = gauge("batch_duration_seconds", "Duration of the last micro-batch")
        self.input_rows = gauge("input_rows", "Rows read by the last micro-batch")
        self.state_rows = gauge("state_rows", "Rows held in state, all stateful operators (0 when stateless)")
        self.watermark = gauge("watermark_timestamp_seconds", "Event-time watermark of the last micro-batch")
        self.last_progress = gauge("last_progress_timestamp_seconds", "Start of the last micro-batch")
        self.active = gauge("query_active", "1 while the query runs, 0 once it terminated")
        self.batches = Counter(PREFIX + "batches", "Completed micro-batches", LABELS, registry=self.registry)

    def _label(self, query_id: uuid.UUID, name: str | None = None) -> str:
        if name:
            self._queries[query_id] = name
        return self._queries.get(query_id, str(query_id))

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        labels = (self.job, self._label(event.id, event.name))
        self.active.labels(*labels).set(1)
        self.batches.labels(*labels)  # the series exists (at 0) before the first batch

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        p = event.progress
        labels = (self.job, self._label(p.id, p.name))
        self.input_rate.labels(*labels).set(p.inputRowsPerSecond)
        self.processed_rate.labels(*labels).set(p.processedRowsPerSecond)
        self.batch_duration.labels(*labels).set(p.batchDuration / 1000)
        self.input_rows.labels(*labels).set(p.numInputRows)
        self.state_rows.labels(*labels).set(sum(op.numRowsTotal for op in p.stateOperators))
        self.last_progress.labels(*labels).set(_epoch_seconds(p.timestamp))
        watermark = p.eventTime.get("watermark")
        # Spark reports a declared watermark as 1970 until data has moved it: left out,
        # or a lag alert would read decades.
        if watermark and (seconds := _epoch_seconds(watermark)) > 0:
            self.watermark.labels(*labels).set(seconds)
        self.batches.labels(*labels).inc()

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        pass  # no batch ran: the last batch's values stand

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        self.active.labels(self.job, self._label(event.id)).set(0)


def metrics_port() -> int | None:
    """KP_METRICS_PORT as a port (0: any free one), None when unset or empty."""
    raw = os.environ.get(PORT_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise StreamingMetricsError(f"{PORT_VARIABLE}={raw!r} is not a port: give 0-65535 (0: any free port), "
                                    "or leave it unset for no metrics server")
    return port


# file_sd target files this process wrote, removed at exit (a SIGKILL leaves them).
_sd_files: set[Path] = set()
_sd_lock = threading.Lock()


def publish_sd_target(directory: Path, job: str, target: str) -> Path:
    """Write [{"targets": [target], "labels": {"job": job}}] to <directory>/<job>-<pid>.json
    atomically (Prometheus may read it at any moment); removed at interpreter exit."""
    directory.mkdir(parents=True, exist_ok=True)
    sweep_dead_sd_targets(directory)
    path = directory / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', job)}-{os.getpid()}.json"
    content = json.dumps([{"targets": [target], "labels": {"job": job}}])
    # Not *.json until complete: a file_sd glob never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.chmod(tmp, 0o644)  # Prometheus may run as another user
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    with _sd_lock:
        _sd_files.add(path)
    return path


def sweep_dead_sd_targets(directory: Path) -> None:
    """Remove the files of jobs that died without their atexit (SIGKILL, SIGTERM), so that
    Prometheus does not keep scraping a dead target."""
    for path in directory.glob("*-*.json"):
        pid = path.stem.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            path.unlink(missing_ok=True)


def withdraw_sd_target(path: Path) -> None:
    with _sd_lock:
        _sd_files.discard(path)
    path.unlink(missing_ok=True)


@atexit.register
def withdraw_all_sd_targets() -> None:
    for path in list(_sd_files):
        withdraw_sd_target(path)


@dataclass
class Exporter:
    """The listener, its HTTP server and its file_sd target (if any): one per process,
    since KP_METRICS_PORT gives one port."""

    listener: ProgressMetrics
    server: WSGIServer
    port: int
    sd_file: Path | None = None
    sessions: list[SparkSession] = field(default_factory=list)

    @property
    def registry(self) -> CollectorRegistry:
        return self.listener.registry

    def attach(self, spark: SparkSession) -> None:
        """Listen to the queries of `spark` (once per session)."""
        if not any(s._jsparkSession.equals(spark._jsparkSession) for s in self.sessions):
            spark.streams.addListener(self.listener)
            self.sessions.append(spark)

    def close(self) -> None:
        """Unregister, stop serving, withdraw the file_sd target."""
        global _exporter
        for s in self.sessions:
            s.streams.removeListener(self.listener)
        self.sessions.clear()
        self.server.shutdown()
        self.server.server_close()
        if self.sd_file is not None:
            withdraw_sd_target(self.sd_file)
        if _exporter is self:
            _exporter = None


_exporter: Exporter | None = None


def close() -> None:
    """Close this process's exporter, if any: a job stopping its queries closes it first,
    or the listener's callbacks for the last events reach a Python driver already gone
    (Spark logs each at ERROR: "Listener PythonStreamingQueryListenerWrapper threw")."""
    if _exporter is not None:
        _exporter.close()


def install(spark: SparkSession, job: str) -> Exporter | None:
    """Export the progress of `spark`'s streaming queries for `job`, as the KP_METRICS_*
    variables say; None (and nothing registered) when KP_METRICS_PORT is unset. The
    process's exporter is reused by a later call (a job's threads may build the
    session again): the port is bound once, the listener added once per session."""
    global _exporter
    port = metrics_port()
    if port is None:
        return None
    if _exporter is None:
        addr = os.environ.get(ADDR_VARIABLE, "").strip() or "127.0.0.1"
        listener = ProgressMetrics(job)
        try:
            server = metrics_server.serve(port, listener.registry, addr)
        except metrics_server.MetricsPortBusy as e:
            raise StreamingMetricsError(f"cannot serve streaming metrics on {addr}:{port} ({ADDR_VARIABLE}:"
                                        f"{PORT_VARIABLE}), the port is busy or the address wrong: choose "
                                        f"another {PORT_VARIABLE} (0: any free port)") from e
        bound = server.server_port
        exporter = Exporter(listener, server, bound)
        if sd_dir := os.environ.get(SD_DIR_VARIABLE, "").strip():
            host = "127.0.0.1" if addr in ("0.0.0.0", "::") else (f"[{addr}]" if ":" in addr else addr)
            try:
                exporter.sd_file = publish_sd_target(Path(sd_dir), job, f"{host}:{bound}")
            except OSError as e:
                exporter.close()
                raise StreamingMetricsError(f"cannot write the file_sd target into {SD_DIR_VARIABLE}={sd_dir}: "
                                            f"{e}") from e
        _exporter = exporter
        log.info("streaming metrics of %s on http://%s:%d/metrics", job, addr, bound)
    _exporter.attach(spark)
    return _exporter

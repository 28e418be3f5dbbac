"""Streaming progress as Prometheus metrics (kafka_patterns.runtime.streaming_metrics): a real
stateful query on a local Spark, the listener fed synthetic events for the edge cases,
the HTTP endpoint, the file_sd target file, and the KP_METRICS_PORT checks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from pyspark.sql.streaming.listener import QueryProgressEvent, QueryStartedEvent, QueryTerminatedEvent

from kafka_patterns.clients import kafka
from kafka_patterns.runtime import spark as kp_spark
from kafka_patterns.runtime import streaming_metrics
from kafka_patterns.runtime.streaming_metrics import PREFIX, ProgressMetrics, StreamingMetricsError

JOB = "metrics-test"
NAMES = ("input_rows_per_second", "processed_rows_per_second", "batch_duration_seconds", "input_rows",
         "state_rows", "watermark_timestamp_seconds", "batches_total", "last_progress_timestamp_seconds",
         "query_active")


@pytest.fixture(scope="module")
def spark():
    """A session of its own (own SQL conf, own listeners) on the process's Spark: a new
    local[1] one, or the unit tier's when it already runs."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    created = SparkContext._active_spark_context is None
    if created:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        base = (SparkSession.builder.master("local[1]").appName("streaming-metrics-test")
                .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.driver.extraJavaOptions", "-Djava.net.preferIPv4Stack=true")
                .getOrCreate())
        base.sparkContext.setLogLevel("ERROR")
    else:
        base = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    session = base.newSession()
    session.conf.set("spark.sql.shuffle.partitions", "1")
    yield session
    if created:
        base.stop()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in (streaming_metrics.PORT_VARIABLE, streaming_metrics.ADDR_VARIABLE, streaming_metrics.SD_DIR_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    yield
    if streaming_metrics._exporter is not None:  # a failed test must not leave its server to the next
        streaming_metrics._exporter.close()


def listeners(spark) -> int:
    return len(spark._jsparkSession.streams().listListeners())


def samples(registry) -> dict[str, list]:
    """Samples by name (without the prefix), the _created ones left out."""
    out: dict[str, list] = {}
    for metric in registry.collect():
        for s in metric.samples:
            if not s.name.endswith("_created"):
                out.setdefault(s.name.removeprefix(PREFIX), []).append(s)
    return out


def test_progress_of_a_stateful_query(spark, tmp_path, monkeypatch):
    monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, "0")
    exporter = streaming_metrics.install(spark, JOB)
    labels = {"job": JOB, "query": "windowed-counts"}

    def value(name: str) -> float | None:
        return exporter.registry.get_sample_value(PREFIX + name, labels)

    from pyspark.sql import functions as F

    started = time.time()
    # rate-micro-batch: 20 rows a batch, event time one second further each batch.
    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 20).option("numPartitions", 1)
            .option("startTimestamp", int(started * 1000)).option("advanceMillisPerBatch", 1000).load())
    counts = (rows.withWatermark("timestamp", "2 seconds")
              .groupBy(F.window("timestamp", "5 seconds"), (F.col("value") % 3).alias("k")).count())
    query = (counts.writeStream.format("noop").outputMode("update").queryName("windowed-counts")
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(processingTime="0.5 seconds").start())
    try:
        kafka.wait_until(lambda: (value("batches_total") or 0) >= 2
                           and value("watermark_timestamp_seconds") is not None, 90, 0.2,
                           "two batches and a watermark in the registry")
        assert value("query_active") == 1
    finally:
        query.stop()
    kafka.wait_until(lambda: value("query_active") == 0, 30, 0.2, "query_active 0 after stop")

    # Stopped: the values are the last batch's and hold still.
    by_name = samples(exporter.registry)
    assert set(NAMES) <= set(by_name), f"missing: {set(NAMES) - set(by_name)}"
    for name in NAMES:
        assert [s.labels for s in by_name[name]] == [labels], name
    assert value("batches_total") >= 2
    assert value("input_rows") == 20
    assert value("input_rows_per_second") > 0
    assert value("processed_rows_per_second") > 0
    assert 0 < value("batch_duration_seconds") < 60
    assert value("state_rows") > 0  # the open windows, 3 keys each
    # The watermark trails the event time (started + one second a batch) by 2 s.
    assert started - 3 <= value("watermark_timestamp_seconds") <= started + value("batches_total")
    assert started - 1 <= value("last_progress_timestamp_seconds") <= time.time()


def progress_json(query_id: uuid.UUID, name: str | None, *, watermark: str | None = None,
                  state_rows: tuple[int, ...] = ()) -> dict:
    """A progress event as Spark writes it (StreamingQueryProgress.json)."""
    operator = {"operatorName": "stateStoreSave", "numRowsUpdated": 1, "numRowsRemoved": 0,
                "allUpdatesTimeMs": 1, "allRemovalsTimeMs": 0, "commitTimeMs": 1, "memoryUsedBytes": 100,
                "numRowsDroppedByWatermark": 0, "numShufflePartitions": 1, "numStateStoreInstances": 1}
    return {"id": str(query_id), "runId": str(uuid.uuid4()), "name": name, "timestamp": "2026-01-01T00:00:10.250Z",
            "batchId": 4, "batchDuration": 1500, "durationMs": {"triggerExecution": 1500},
            "eventTime": {"watermark": watermark} if watermark else {},
            "stateOperators": [{**operator, "numRowsTotal": n} for n in state_rows],
            "sources": [], "sink": {"description": "noop", "numOutputRows": 0},
            "numInputRows": 30, "inputRowsPerSecond": 15.0, "processedRowsPerSecond": 20.0}


def started_json(query_id: uuid.UUID, name: str | None) -> dict:
    return {"id": str(query_id), "runId": str(uuid.uuid4()), "name": name, "timestamp": "2026-01-01T00:00:00.000Z"}


def test_events_to_metrics():
    """Named and unnamed queries, stateless and stateful, with and without a watermark
    (and one Spark still reports at 1970)."""
    m = ProgressMetrics(JOB)
    named, unnamed, early = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    for qid, name in ((named, "enrich-main"), (unnamed, None), (early, "early")):
        m.onQueryStarted(QueryStartedEvent.fromJson(started_json(qid, name)))
    m.onQueryProgress(QueryProgressEvent.fromJson({"progress": progress_json(
        named, "enrich-main", watermark="2026-01-01T00:00:05.500Z", state_rows=(7, 5))}))
    m.onQueryProgress(QueryProgressEvent.fromJson({"progress": progress_json(unnamed, None)}))
    m.onQueryProgress(QueryProgressEvent.fromJson({"progress": progress_json(
        early, "early", watermark="1970-01-01T00:00:00.000Z")}))
    m.onQueryTerminated(QueryTerminatedEvent.fromJson(
        {"id": str(unnamed), "runId": str(uuid.uuid4()), "exception": None, "errorClassOnException": None}))

    def value(name: str, query: str) -> float | None:
        return m.registry.get_sample_value(PREFIX + name, {"job": JOB, "query": query})

    t = 1767225600.0  # 2026-01-01T00:00:00Z
    assert value("state_rows", "enrich-main") == 12
    assert value("watermark_timestamp_seconds", "enrich-main") == t + 5.5
    assert value("last_progress_timestamp_seconds", "enrich-main") == t + 10.25
    assert value("batch_duration_seconds", "enrich-main") == 1.5
    assert (value("input_rows", "enrich-main"), value("input_rows_per_second", "enrich-main"),
            value("processed_rows_per_second", "enrich-main")) == (30, 15.0, 20.0)
    assert value("batches_total", "enrich-main") == 1
    assert value("query_active", "enrich-main") == 1
    # Unnamed: the id is the query label; stateless: 0 rows; no watermark: no sample.
    assert value("state_rows", str(unnamed)) == 0
    assert value("watermark_timestamp_seconds", str(unnamed)) is None
    assert value("query_active", str(unnamed)) == 0
    assert value("watermark_timestamp_seconds", "early") is None


def test_http_endpoint_on_a_free_port(spark, monkeypatch):
    monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, "0")
    monkeypatch.setenv(streaming_metrics.ADDR_VARIABLE, "127.0.0.1")
    exporter = streaming_metrics.install(spark, JOB)
    assert exporter.port > 0
    qid = uuid.uuid4()
    exporter.listener.onQueryStarted(QueryStartedEvent.fromJson(started_json(qid, "q")))
    exporter.listener.onQueryProgress(QueryProgressEvent.fromJson({"progress": progress_json(
        qid, "q", watermark="2026-01-01T00:00:05.000Z", state_rows=(3,))}))
    with urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}/metrics", timeout=10) as response:
        text = response.read().decode()
    for name in NAMES:
        assert f'{PREFIX}{name}{{job="{JOB}",query="q"}} ' in text, name
    exporter.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}/metrics", timeout=5)


def test_one_exporter_per_process(spark, monkeypatch):
    monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, "0")
    before = listeners(spark)
    first = streaming_metrics.install(spark, JOB)
    assert streaming_metrics.install(spark, JOB) is first
    assert listeners(spark) == before + 1
    first.close()
    assert listeners(spark) == before


def test_file_sd_target(spark, tmp_path, monkeypatch):
    sd_dir = tmp_path / "file_sd"
    monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, "0")
    monkeypatch.setenv(streaming_metrics.ADDR_VARIABLE, "0.0.0.0")
    monkeypatch.setenv(streaming_metrics.SD_DIR_VARIABLE, str(sd_dir))
    exporter = streaming_metrics.install(spark, JOB)
    target = sd_dir / f"{JOB}-{os.getpid()}.json"
    assert exporter.sd_file == target
    assert json.loads(target.read_text()) == [{"targets": [f"127.0.0.1:{exporter.port}"], "labels": {"job": JOB}}]
    assert [p.name for p in sd_dir.iterdir()] == [target.name]  # no temp file left
    exporter.close()
    assert not target.exists()


def test_file_sd_target_removed_at_exit(tmp_path):
    code = ("import sys; from pathlib import Path; from kafka_patterns.runtime import streaming_metrics as m; "
            "p = m.publish_sd_target(Path(sys.argv[1]), 'exit-job', '127.0.0.1:1'); print(p, p.exists())")
    src = str(Path(streaming_metrics.__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    path, existed = out.stdout.split()
    assert existed == "True" and Path(path).name.startswith("exit-job-")
    assert not Path(path).exists()


@pytest.mark.parametrize("value", ["abc", "9464x", "1.5", "-1", "65536", "0x10"])
def test_bad_port_fails_naming_the_variable(spark, monkeypatch, value):
    monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, value)
    before = listeners(spark)
    with pytest.raises(StreamingMetricsError, match=streaming_metrics.PORT_VARIABLE):
        streaming_metrics.install(spark, JOB)
    assert listeners(spark) == before


def test_busy_port_fails_naming_it(spark, monkeypatch):
    before = listeners(spark)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, str(port))
        with pytest.raises(StreamingMetricsError) as failure:
            streaming_metrics.install(spark, JOB)
    assert f"127.0.0.1:{port}" in str(failure.value) and streaming_metrics.PORT_VARIABLE in str(failure.value)
    assert listeners(spark) == before and streaming_metrics._exporter is None


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_port_registers_nothing(spark, monkeypatch, value):
    if value is not None:
        monkeypatch.setenv(streaming_metrics.PORT_VARIABLE, value)
    before = listeners(spark)
    assert streaming_metrics.install(spark, JOB) is None
    assert listeners(spark) == before


def test_session_installs_the_exporter(spark, monkeypatch):
    """spark.session hands a session it builds to install, with the job name."""
    from pyspark.sql import SparkSession

    calls = []
    monkeypatch.setattr(streaming_metrics, "install", lambda s, job: calls.append((s, job)))
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    monkeypatch.setattr(SparkSession, "_instantiatedSession", None)  # no session of another thread either
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", lambda self: spark)
    monkeypatch.setenv("SPARK_HOME", "/nonexistent")  # the pod's branch: no local jars to look up
    monkeypatch.setenv("SPARK_LOG_LEVEL", "ERROR")
    assert kp_spark.session("some-job") is spark
    assert calls == [(spark, "some-job")]


def test_another_thread_gets_the_process_session_not_a_new_builder(spark, monkeypatch):
    """A scenario's threads (fan-out runs its subscribers concurrently) have no active
    session of their own; asking the builder again would warn that its settings no
    longer apply."""
    import threading

    from pyspark.sql import SparkSession

    def no_builder(self):
        raise AssertionError("the builder was asked again")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", no_builder)
    got = []
    thread = threading.Thread(target=lambda: got.append(kp_spark.session("another-job")))
    thread.start()
    thread.join(30)
    assert got == [SparkSession._instantiatedSession]
    assert got[0].sparkContext is spark.sparkContext

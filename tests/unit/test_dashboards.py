"""The Grafana dashboards (catalogue/metrics/dashboards/*.json) and their static
renderer (kafka_patterns.monitoring.dashboard), without a cluster: every file valid for Grafana, every
panel with a title, a unit and PromQL that promtool parses, every metric it reads one the
platform produces (taken from the producers' own code, the JMX exporter rules and the
alerts), and the page drawn from a fake Prometheus, placeholders and errors included."""

from __future__ import annotations

import errno
import json
import random
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from prometheus_client import CollectorRegistry

from helpers import ROOT, jmx_export, jmx_reads
from kafka_patterns.monitoring import dashboard
from kafka_patterns.monitoring.canary import Metrics as CanaryMetrics
from kafka_patterns.monitoring.dashboard import DashboardError, load_dashboards, panel_queries
from kafka_patterns.monitoring.lag_exporter import LagCollector

FILES = ROOT / "catalogue" / "metrics"
DASHBOARDS = FILES / "dashboards"
PATHS = sorted(DASHBOARDS.glob("*.json"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# What the JMX exporter matches a rule against -> the name and labels the rules must give
# it: every Kafka and Connect metric the dashboards read, and the labels they select or
# group by (test_alert_rules checks those of the alerts the same way).
JMX_SAMPLES = [
    ("kafka-metrics.yml", "kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value: 0",
     "kafka_server_replicamanager_underreplicatedpartitions", {}),
    ("kafka-metrics.yml", "kafka.server<type=ReplicaManager, name=LeaderCount><>Value: 12",
     "kafka_server_replicamanager_leadercount", {}),
    ("kafka-metrics.yml", "kafka.controller<type=KafkaController, name=ActiveControllerCount><>Value: 1",
     "kafka_controller_kafkacontroller_activecontrollercount", {}),
    ("kafka-metrics.yml", "kafka.controller<type=KafkaController, name=OfflinePartitionsCount><>Value: 0",
     "kafka_controller_kafkacontroller_offlinepartitionscount", {}),
    ("kafka-metrics.yml", "kafka.cluster<type=Partition, name=UnderMinIsr, topic=canary, partition=0><>Value: 0",
     "kafka_cluster_partition_underminisr", {"topic": "canary", "partition": "0"}),
    ("kafka-metrics.yml",
     "kafka.network<type=RequestMetrics, name=RequestsPerSec, request=Produce, version=11><>Count: 7",
     "kafka_network_requestmetrics_requests_total", {"request": "Produce", "version": "11"}),
    ("kafka-metrics.yml", "kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>99thPercentile: 3.5",
     "kafka_network_requestmetrics_totaltimems", {"request": "Produce", "quantile": "0.99"}),
    # The all-topics meters have no topic label: the dashboards select them with topic="".
    ("kafka-metrics.yml", "kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec><>Count: 1",
     "kafka_server_brokertopicmetrics_bytesin_total", {}),
    ("kafka-metrics.yml", "kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec><>Count: 1",
     "kafka_server_brokertopicmetrics_bytesout_total", {}),
    ("kafka-metrics.yml", "kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec, topic=canary><>Count: 1",
     "kafka_server_brokertopicmetrics_bytesin_total", {"topic": "canary"}),
    ("kafka-metrics.yml", "kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec, topic=canary><>Count: 1",
     "kafka_server_brokertopicmetrics_bytesout_total", {"topic": "canary"}),
    ("kafka-metrics.yml", "kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec, topic=canary><>Count: 1",
     "kafka_server_brokertopicmetrics_messagesin_total", {"topic": "canary"}),
    ("kafka-metrics.yml",
     "kafka.server<type=BrokerTopicMetrics, name=FailedProduceRequestsPerSec, topic=canary><>Count: 1",
     "kafka_server_brokertopicmetrics_failedproducerequests_total", {"topic": "canary"}),
    ("kafka-metrics.yml",
     "kafka.server<type=BrokerTopicMetrics, name=FailedFetchRequestsPerSec, topic=canary><>Count: 1",
     "kafka_server_brokertopicmetrics_failedfetchrequests_total", {"topic": "canary"}),
    ("kafka-metrics.yml", "kafka.log<type=Log, name=Size, topic=canary, partition=0><>Value: 1024",
     "kafka_log_log_size", {"topic": "canary", "partition": "0"}),
    ("kafka-metrics.yml",
     "kafka.server<type=socket-server-metrics, listener=CLIENT, networkProcessor=3><>connection-count: 4.0",
     "kafka_server_socket_server_metrics_connection_count", {"listener": "CLIENT", "networkProcessor": "3"}),
    ("connect-metrics.yml", "kafka.connect<type=connector-metrics, connector=pg-source><>status: running",
     "kafka_connect_connector_status", {"connector": "pg-source", "status": "running"}),
    ("connect-metrics.yml", "kafka.connect<type=connector-metrics, connector=pg-source><>connector-type: source",
     "kafka_connect_connector_connector_type", {"connector": "pg-source", "connector_type": "source"}),
    ("connect-metrics.yml", "kafka.connect<type=connector-task-metrics, connector=pg-source, task=0><>status: failed",
     "kafka_connect_connector_task_status", {"connector": "pg-source", "task": "0", "status": "failed"}),
    ("connect-metrics.yml",
     "kafka.connect<type=source-task-metrics, connector=pg-source, task=0><>source-record-write-rate: 2.0",
     "kafka_connect_source_task_source_record_write_rate", {"connector": "pg-source", "task": "0"}),
    ("connect-metrics.yml",
     "kafka.connect<type=sink-task-metrics, connector=pg-sink, task=0><>sink-record-send-rate: 2.0",
     "kafka_connect_sink_task_sink_record_send_rate", {"connector": "pg-sink", "task": "0"}),
    ("connect-metrics.yml",
     "kafka.connect<type=task-error-metrics, connector=pg-sink, task=0><>total-record-errors: 0",
     "kafka_connect_task_error_total_record_errors", {"connector": "pg-sink", "task": "0"}),
]
# The JVM metrics jmx_prometheus_javaagent 1.x exports beside the rules' (client_java 1.x
# JvmMetrics, e.g. jvm_memory_used_bytes{area="heap"}): in no file of this repository.
JVM_METRICS = {"jvm_memory_used_bytes", "jvm_memory_max_bytes"}
PROMETHEUS_METRICS = {"up"}  # Prometheus's own series of every target

# Metrics that exist only while something happens or runs (a failure, a connector, a
# streaming query): an expression reading one returns 0 instead of nothing
# (`or vector(0)`), or its panel says when it has data (kafkaPatterns.dataOnlyWhen).
MAY_BE_ABSENT = re.compile(r"^(kafka_connect_(connector_|connector_task_|source_task_|sink_task_|task_error_)"
                           r"|kafka_server_brokertopicmetrics_failed|kafka_patterns_streaming_)")

PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
                "offset", "inf", "nan"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are not functions,
    keywords, label names or durations."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals (label values, label_replace args)
    s = re.sub(r"\{[^}]*\}", "", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", "", s)  # range selectors
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", s)  # label lists
    return {m.group(0) for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", s)
            if m.group(0).lower() not in PROMQL_WORDS and not s[m.end():].lstrip().startswith("(")}


def exposed(registry: CollectorRegistry) -> set[str]:
    """The sample names a prometheus-client registry exposes, by metric type (labelled
    metrics have no samples until first used)."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "summary": ("", "_count", "_sum")}
    return {f.name + s for f in registry.collect() for s in suffixes.get(f.type, ("",))}


class NoGroups:
    """A lag exporter source with nothing in it: its families are still declared."""

    def groups(self) -> list[str]:
        return []

    def end_offsets(self, partitions) -> dict:
        return {}


def known_metrics() -> set[str]:
    from kafka_patterns.runtime.streaming_metrics import ProgressMetrics  # imports pyspark: only here

    canary, lag = CollectorRegistry(), CollectorRegistry()
    CanaryMetrics(canary, "canary")
    lag.register(LagCollector(NoGroups()))
    alerts = yaml.safe_load((FILES / "alerts.yml").read_text())["groups"]
    from_alerts = {n for g in alerts for r in g["rules"] for n in metric_names(r["expr"])}
    from_rules = {metric for _, _, metric, _ in JMX_SAMPLES}
    return (exposed(canary) | exposed(lag) | exposed(ProgressMetrics("job").registry) | from_alerts | from_rules
            | JVM_METRICS | PROMETHEUS_METRICS)


def raw_panels() -> Iterator[tuple[Path, dict]]:
    for path in PATHS:
        for panel in json.loads(path.read_text())["panels"]:
            yield path, panel


# --- the files ---------------------------------------------------------------------------

def test_there_are_dashboards_for_every_part_of_the_platform():
    titles = {b.title for b in load_dashboards()}
    assert titles == {"Kafka cluster health", "Kafka topics", "Consumer groups and clients", "Kafka Connect",
                      "Spark streaming jobs", "Delivery canary"}


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_the_dashboard_is_grafana_json_with_a_prometheus_datasource_variable(path):
    doc = json.loads(path.read_text())
    assert doc.get("uid") and doc.get("title"), f"{path.name}: uid and title"
    assert 36 <= doc.get("schemaVersion", 0) <= 41, f"{path.name}: schemaVersion {doc.get('schemaVersion')}"
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    ds = variables.get("datasource", {})
    assert ds.get("type") == "datasource" and ds.get("query") == "prometheus", \
        f"{path.name}: no template variable `datasource` of type datasource, query prometheus"
    ids = [p.get("id") for p in doc["panels"]]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate panel ids {ids}"
    for panel in doc["panels"]:
        where = f"{path.name} panel {panel.get('id')} {panel.get('title')!r}"
        assert panel.get("datasource") == {"type": "prometheus", "uid": "${datasource}"}, where
        assert {"h", "w", "x", "y"} <= set(panel.get("gridPos", {})), f"{where}: gridPos"
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, f"{where}: wider than the dashboard"
        refs = [t.get("refId") for t in panel.get("targets", [])]
        assert len(refs) == len(set(refs)), f"{where}: duplicate refIds {refs}"
        for target in panel.get("targets", []):
            assert target.get("datasource") == panel["datasource"], f"{where} {target.get('refId')}: datasource"


def test_uids_and_titles_are_unique():
    boards = load_dashboards()
    for what in ("uid", "title"):
        values = [getattr(b, what) for b in boards]
        assert len(values) == len(set(values)), f"duplicate dashboard {what}s: {values}"


@pytest.mark.parametrize(("path", "panel"), list(raw_panels()), ids=lambda v: v.stem if isinstance(v, Path) else
                         f"{v.get('id')}-{v.get('title')}")
def test_every_panel_has_a_title_a_known_unit_an_axis_label_and_promql(path, panel):
    where = f"{path.name} panel {panel.get('id')}"
    assert panel.get("title", "").strip(), f"{where}: no title"
    assert panel.get("description", "").strip(), f"{where}: no description (what it shows, what is healthy)"
    assert panel.get("type") in {"timeseries", "stat"}, f"{where}: type {panel.get('type')}"
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
    assert unit in dashboard.UNITS, f"{where}: unit {unit!r} is not one the renderer knows ({sorted(dashboard.UNITS)})"
    targets = panel.get("targets", [])
    assert targets and all(t.get("expr", "").strip() for t in targets), f"{where}: every target needs an expr"
    [loaded] = [p for b in load_dashboards() if b.path == path for p in b.panels if p.id == panel["id"]]
    assert loaded.axis_label, f"{where}: unit {unit!r} says nothing: set fieldConfig.defaults.custom.axisLabel"


def test_panel_queries_are_every_target_with_the_variables_substituted():
    queries = list(panel_queries(DASHBOARDS))
    targets = sum(len(p["targets"]) for _, p in raw_panels())
    assert len(queries) == targets
    assert len(set(queries)) == len(queries), "two targets of a panel with the same expr"
    for board, panel, expr in queries:
        assert "$" not in expr and "[[" not in expr, f"{board} / {panel}: unsubstituted variable in {expr}"
    rate = [e for _, _, e in queries if "rate(" in e]
    assert rate and all("[1m]" in e or "[5m]" in e for e in rate), "$__rate_interval is 1m for the default 30m"
    assert '{topic=~".+"}' in next(e for b, _, e in queries if b == "Kafka topics"), "the All of $topic"


def test_every_metric_is_one_the_platform_produces():
    known = known_metrics()
    unknown = [f"{b} / {p}: {m}" for b, p, e in panel_queries(DASHBOARDS) for m in sorted(metric_names(e) - known)]
    for path in PATHS:
        doc = json.loads(path.read_text())
        for var in doc["templating"]["list"]:
            if var.get("type") == "query":
                metric = re.match(r"label_values\((\w+)", var["query"]["query"]).group(1)
                unknown += [f"{path.name} variable {var['name']}: {metric}"] if metric not in known else []
    for board in load_dashboards():
        for panel in board.panels:
            if panel.data_only_when:
                unknown += [f"{board.title} / {panel.title} dataOnlyWhen: {m}"
                            for m in sorted(metric_names(panel.data_only_when.expr) - known)]
    assert not unknown, "metrics no exporter, JMX rule or alert of the platform produces:\n  " + "\n  ".join(unknown)


@pytest.mark.parametrize(("rules_file", "sample", "metric", "labels"), JMX_SAMPLES,
                         ids=[f"{m}-{'-'.join(labels.values()) or 'nolabels'}" for _, _, m, labels in JMX_SAMPLES])
def test_the_jmx_rules_produce_the_names_the_dashboards_read(rules_file, sample, metric, labels):
    exported = jmx_export(yaml.safe_load((FILES / rules_file).read_text()), sample)
    assert exported == (metric, labels), f"{rules_file} turns {sample!r} into {exported}"


def test_the_exporter_reads_the_request_types_the_dashboards_chart_and_no_others():
    """Request histograms cost most of a scrape: kafka-metrics.yml's includeObjectNames
    reads only the request types a dashboard selects (the rules above check those)."""
    config = yaml.safe_load((FILES / "kafka-metrics.yml").read_text())
    charted = set()
    for _, _, expr in panel_queries():
        for selector in re.findall(r'kafka_network_requestmetrics_\w+\{request=~"([^"]+)"', expr):
            charted.update(selector.split("|"))
    assert charted, "no dashboard charts a request type any more: drop the RequestMetrics entries"
    sample = "kafka.network<type=RequestMetrics, name=TotalTimeMs, request={}><>99thPercentile: 3.5"
    assert {r for r in charted if not jmx_reads(config, sample.format(r))} == set()
    assert not jmx_reads(config, sample.format("DescribeGroups"))
    assert jmx_reads(config, "kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value: 0")


def test_an_expression_of_a_metric_that_may_be_absent_gives_0_or_says_when_it_has_data():
    offenders = []
    for board in load_dashboards():
        for panel in board.panels:
            for t in panel.targets:
                absent = sorted(m for m in metric_names(t.expr) if MAY_BE_ABSENT.match(m))
                if absent and "vector(0)" not in t.expr and panel.data_only_when is None:
                    offenders.append(f"{board.title} / {panel.title} [{t.ref}] reads {', '.join(absent)}: {t.expr}")
    assert not offenders, ("empty on a healthy platform: write `or vector(0)` (`or on() vector(0)` after a `by`) or "
                           "set kafkaPatterns.dataOnlyWhen:\n  " + "\n  ".join(offenders))


def test_promtool_parses_every_expression(tmp_path):
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not Path(promtool).exists():
        pytest.fail("promtool not found: run `make setup` (Debian's prometheus package ships it)", pytrace=False)
    exprs = [e for _, _, e in panel_queries(DASHBOARDS)]
    exprs += [p.data_only_when.expr for b in load_dashboards() for p in b.panels if p.data_only_when]
    rules = {"groups": [{"name": "dashboards", "rules": [{"record": f"dashboard_query_{i}", "expr": e}
                                                         for i, e in enumerate(exprs)]}]}
    (tmp_path / "queries.yml").write_text(yaml.safe_dump(rules))
    proc = subprocess.run([promtool, "check", "rules", "queries.yml"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"promtool refuses a dashboard expression:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize(("expr", "names"), [
    ('sum by (le, topic) (rate(a_bucket{topic=~".+"}[1m]))', {"a_bucket"}),
    ('count(up{job="kafka"} == 0) or vector(0)', {"up"}),
    ("time() - max by (job, query) (w_seconds)", {"w_seconds"}),
    ("sum(x) or on() vector(0)", {"x"}),
])
def test_metric_names_reads_promql(expr, names):
    assert metric_names(expr) == names


# --- template variables and formatting ----------------------------------------------------

def write_board(directory: Path, *, expr: str = "sum(up)", variables: list | None = None) -> Path:
    doc = {"uid": "t", "title": "T", "schemaVersion": 39,
           "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"},
                                   *(variables or [])]},
           "panels": [{"id": 1, "type": "timeseries", "title": "Targets up", "description": "d",
                       "fieldConfig": {"defaults": {"unit": "short", "custom": {"axisLabel": "targets"}}},
                       "targets": [{"refId": "A", "expr": expr, "legendFormat": "{{job}}"}]}]}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "t.json").write_text(json.dumps(doc))
    return directory


def test_variables_are_substituted_as_grafana_would_with_everything_selected(tmp_path):
    variables = [{"name": "group", "type": "query", "includeAll": True, "allValue": ".+",
                  "current": {"value": ["$__all"]}},
                 {"name": "env", "type": "custom", "current": {"value": "local"}}]
    d = write_board(tmp_path, expr='rate(x{g=~"$group", env="${env}"}[$__rate_interval])', variables=variables)
    assert [e for *_, e in panel_queries(d, range_seconds=6 * 3600)] == ['rate(x{g=~".+", env="local"}[3m])']


def test_an_undefined_variable_names_the_dashboard_and_the_variable(tmp_path):
    d = write_board(tmp_path, expr='up{job="$nosuch"}')
    with pytest.raises(DashboardError, match=r"t\.json, panel 1 'Targets up': template variable \$nosuch"):
        list(panel_queries(d))


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("90s", 90), ("2h", 7200), ("1d", 86400)])
def test_parse_duration(text, seconds):
    assert dashboard.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0m", "30", "m", "1.5h", "-5m"])
def test_a_bad_range_is_refused(text, capsys):
    with pytest.raises(SystemExit) as exit_:
        dashboard.main(["--range", text])
    assert exit_.value.code == 2
    assert "--range" in capsys.readouterr().err


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (1536, "bytes", "1.5 KiB"), (3 * 2**20, "Bps", "3 MiB/s"), (0.25, "s", "250 ms"), (1500, "ms", "1.5 s"),
    (12_500, "recps", "12.5k"), (0.5, "percentunit", "50%"), (float("nan"), "s", "–"),
])
def test_format_value(value, unit, shown):
    assert dashboard.format_value(value, unit) == shown


@pytest.mark.parametrize(("fmt", "labels", "shown"), [
    ("{{consumergroup}} / {{topic}}", {"consumergroup": "g", "topic": "t"}, "g / t"),
    ("{{topic}} produce", {}, "produce"),  # the 0 of `or on() vector(0)`
    ("", {"job": "kafka", "__name__": "up"}, '{job="kafka"}'),
    ("{{node}}", {"instance": "h:1"}, '{instance="h:1"}'),
])
def test_legend(fmt, labels, shown):
    assert dashboard.legend(fmt, labels) == shown


# --- rendering from a fake Prometheus -----------------------------------------------------

# (expr, the sample times the query asks for) -> (HTTP status, content type, body)
Answer = Callable[[str, list[float]], tuple[int, str, object]]


def matrix(result: list[dict]) -> tuple[int, str, object]:
    return 200, "application/json", {"status": "success", "data": {"resultType": "matrix", "result": result}}


def canned(expr: str, times: list[float]) -> tuple[int, str, object]:
    """Two series for every expression; none for the watermark; NaN for a quantile (no observations)."""
    if "watermark" in expr:
        return matrix([])
    return matrix([{"metric": {"topic": topic, "node": f"kafka-{n}"},
                    "values": [[t, "NaN" if "histogram_quantile" in expr else str(n * (1 + i % 7))]
                               for i, t in enumerate(times)]}
                   for n, topic in enumerate(("canary", "weather.readings"), 1)])


class FakePrometheus(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.server.requests.append((url.path, params))
        if url.path == "/api/v1/query_range":
            start, end, step = float(params["start"]), float(params["end"]), float(params["step"])
            times = [start + i * step for i in range(int((end - start) // step) + 1)]
            status, kind, body = self.server.answer(params["query"], times)
        else:
            status, kind, body = 404, "text/html", "<html>not found</html>"
        payload = (json.dumps(body) if isinstance(body, dict) else body).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def bind_outside_the_platform_ports(make: Callable[[int], object]):
    """make(port) on a free port of 40000-60999. Not port 0: the kernel's ephemeral range
    starts at 32768, inside the ports the local cluster and a CI run use (19000-39999)."""
    start = random.randrange(40000, 61000)
    for offset in range(21000):
        port = 40000 + (start - 40000 + offset) % 21000
        try:
            return make(port)
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise
    raise RuntimeError("no free port in 40000-60999")


@contextmanager
def fake_prometheus(answer: Answer = canned) -> Iterator[tuple[str, list]]:
    server = bind_outside_the_platform_ports(lambda port: ThreadingHTTPServer(("127.0.0.1", port), FakePrometheus))
    server.answer, server.requests = answer, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", server.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def images(index: Path) -> list[Path]:
    return [index.parent / src for src in re.findall(r'<img src="([^"]+)"', index.read_text())]


@pytest.mark.slow
def test_render_draws_every_panel_as_a_png_on_one_page(tmp_path):
    out = tmp_path / "dashboard"
    with fake_prometheus() as (url, requests_):
        assert dashboard.main(["--prometheus", url, "--out", str(out), "--range", "30m"]) == 0
    index = out / "index.html"
    page = index.read_text()
    boards = load_dashboards()
    for board in boards:
        assert f"<h2>{board.title}</h2>" in page
        for panel in board.panels:
            assert f"<strong>{panel.title}</strong>" in page.replace("&#x27;", "'")
    pngs = images(index)
    assert len(pngs) == sum(len(b.panels) for b in boards)
    for png in pngs:
        assert png.read_bytes()[:8] == PNG_MAGIC, f"{png} is not a PNG"
    # No series for the watermark, NaN only for the latency quantiles: placeholders saying why.
    assert page.count('<figure class="nodata">') == 2
    assert "Data only while a query with an event-time watermark runs" in page
    assert "Only NaN: nothing observed in this range" in page
    queries = [p for path, p in requests_ if path == "/api/v1/query_range"]
    assert len(queries) == len(list(panel_queries(DASHBOARDS)))
    for q in queries:
        assert "$" not in q["query"] and float(q["start"]) < float(q["end"]) and q["step"] == "15"


def test_a_refused_query_is_drawn_as_a_failure_and_the_exit_status_says_so(tmp_path):
    def refuse(expr, times):
        return 400, "application/json", {"status": "error", "errorType": "bad_data", "error": "parse error: canned"}

    out = tmp_path / "out"
    with fake_prometheus(refuse) as (url, _):
        assert dashboard.main(["--prometheus", url, "--out", str(out), "--dashboards",
                               str(write_board(tmp_path / "boards"))]) == 1
    page = (out / "index.html").read_text()
    assert '<figure class="failed">' in page and "bad_data: parse error: canned" in page
    assert images(out / "index.html")[0].read_bytes()[:8] == PNG_MAGIC


def test_no_series_is_a_no_data_placeholder_not_a_failure(tmp_path):
    out = tmp_path / "out"
    with fake_prometheus(lambda expr, times: matrix([])) as (url, _):
        assert dashboard.main(["--prometheus", url, "--out", str(out), "--dashboards",
                               str(write_board(tmp_path / "boards"))]) == 0
    assert '<figure class="nodata">' in (out / "index.html").read_text()
    assert images(out / "index.html")[0].read_bytes()[:8] == PNG_MAGIC


def test_an_unreachable_prometheus_is_an_error_naming_its_url(tmp_path, capsys):
    # A port bound but not listening: connections to it are refused for sure.
    with socket.socket() as holder:
        bind_outside_the_platform_ports(lambda port: holder.bind(("127.0.0.1", port)))
        url = f"http://127.0.0.1:{holder.getsockname()[1]}"
        with pytest.raises(DashboardError, match=re.escape(f"Prometheus at {url} is unreachable")):
            dashboard.render(url, tmp_path / "out", "30m", write_board(tmp_path / "boards"))
        assert dashboard.main(["--prometheus", url, "--out", str(tmp_path / "out"),
                               "--dashboards", str(tmp_path / "boards")]) == 2
    err = capsys.readouterr().err
    assert f"Prometheus at {url} is unreachable" in err and "Connection refused" in err
    assert not (tmp_path / "out" / "index.html").exists()


def test_a_server_that_is_not_prometheus_is_an_error_naming_its_url(tmp_path):
    boards = write_board(tmp_path / "boards")
    with fake_prometheus(lambda expr, times: (404, "text/html", "<html>no</html>")) as (url, _), \
            pytest.raises(DashboardError) as error:
        dashboard.render(url, tmp_path / "out", "30m", boards)
    assert f"{url}/api/v1/query_range did not answer as the Prometheus HTTP API (HTTP 404)" in str(error.value)

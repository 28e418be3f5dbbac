"""The platform's Grafana dashboards as a static page: every panel's PromQL run against a
Prometheus (query_range) and drawn as one PNG per panel, grouped by dashboard, in an
index.html. No Grafana needed: the panels come from the dashboard JSON files Grafana
imports (catalogue/metrics/dashboards/*.json), so they are defined once.

    python -m kafka_patterns.monitoring.dashboard [--prometheus http://127.0.0.1:9090] [--out .run/dashboard]
        [--range 30m] [--dashboards DIR]

Conventions of the dashboard files, which the unit tests check:
  - the data source is the template variable `datasource` (type prometheus);
  - every panel has a title, a unit (fieldConfig.defaults.unit, a Grafana unit id) and
    its PromQL in targets[].expr; `custom.axisLabel` names the unit where the id does not
    (short, none);
  - template variables are substituted here as Grafana would with everything selected:
    $__rate_interval, $__interval and $__range from the time range and step, a query
    variable set to All by its allValue (or .*), any other by its current value;
  - every panel shows data on a healthy platform. An expression that is legitimately
    empty there (a failed task, a lost record: events that did not happen) is written
    to give 0 instead: `sum(...) or vector(0)`, or `sum by (l) (...) or on() vector(0)`
    for a breakdown (0 only while there is nothing to break down). A panel whose data
    only exists while something runs that a healthy platform need not run (a Spark
    streaming query, a Connect connector) says so in a field Grafana ignores:
        "kafkaPatterns": {"dataOnlyWhen": {"expr": "<PromQL, non-empty while it runs>",
                                          "description": "<what must run>"}}
    tests/integration/test_dashboard_panels.py requires data of every panel against the
    live Prometheus, of those only while their condition holds.

Exit status: 0 when every panel was drawn, 1 when some query failed (drawn as a
placeholder naming the error), 2 when Prometheus is unreachable or a dashboard invalid.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import math
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

from kafka_patterns.config.catalogue import METRICS_DIR, ROOT

DASHBOARD_DIR = METRICS_DIR / "dashboards"
DEFAULT_PROMETHEUS = "http://127.0.0.1:9090"
DEFAULT_OUT = ROOT / ".run" / "dashboard"
DEFAULT_RANGE, DEFAULT_RANGE_SECONDS = "30m", 1800
TIMEOUT = 15.0  # seconds, each query
MAX_POINTS = 240  # per series: the step is the range divided by this, at least MIN_STEP
MIN_STEP = 15
MIN_RATE_INTERVAL = 60  # Grafana: at least 4 scrape intervals; 1m covers scrapes up to 15s

# Grafana unit id -> what its axis shows, unless the panel sets custom.axisLabel (counts: it
# must); axis_scale puts the prefix on it (KiB/s, milliseconds, thousands).
UNITS = {
    "short": "", "none": "", "percent": "percent", "percentunit": "percent",
    "bytes": "bytes", "Bps": "bytes/s", "s": "seconds", "ms": "milliseconds",
    "reqps": "requests/s", "recps": "records/s", "mps": "messages/s", "rowsps": "rows/s", "ops": "operations/s",
}
DURATION = re.compile(r"^(\d+)([smhd])$")
SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)")


class DashboardError(Exception):
    """Prometheus unreachable, or a dashboard file invalid: the message names which."""


class QueryError(Exception):
    """Prometheus refused one query (bad PromQL, a timeout): that panel only."""


@dataclass(frozen=True)
class Target:
    ref: str
    expr: str  # template variables substituted: what Prometheus is sent
    legend: str  # Grafana legendFormat: {{label}} placeholders


@dataclass(frozen=True)
class Condition:
    expr: str
    description: str


@dataclass(frozen=True)
class Panel:
    id: int
    title: str
    kind: str  # Grafana panel type: timeseries, stat
    unit: str
    axis_label: str
    description: str
    targets: tuple[Target, ...]
    data_only_when: Condition | None = None


@dataclass(frozen=True)
class Dashboard:
    uid: str
    title: str
    description: str
    path: Path
    panels: tuple[Panel, ...]


@dataclass(frozen=True)
class Series:
    labels: dict[str, str]
    times: tuple[float, ...]  # unix seconds
    values: tuple[float, ...]  # NaN where Prometheus answers NaN (e.g. a quantile of no observations)

    @property
    def has_data(self) -> bool:
        """A number at least once: a series of NaN only (a quantile of a histogram that
        observed nothing) shows nothing, in Grafana as here."""
        return any(not math.isnan(v) for v in self.values)


# --- time range --------------------------------------------------------------------------

def parse_duration(text: str) -> int:
    """'30m' -> 1800: a number and one of s, m, h, d."""
    match = DURATION.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"{text!r} is not a duration: give a positive number and s, m, h or d, e.g. 30m or 2h")
    return int(match.group(1)) * SECONDS[match.group(2)]


def format_duration(seconds: int) -> str:
    for unit in ("d", "h", "m"):
        if seconds % SECONDS[unit] == 0:
            return f"{seconds // SECONDS[unit]}{unit}"
    return f"{seconds}s"


def step_for(range_seconds: int) -> int:
    return max(MIN_STEP, math.ceil(range_seconds / MAX_POINTS / 5) * 5)


def builtin_variables(range_seconds: int) -> dict[str, str]:
    step = step_for(range_seconds)
    return {"__range": format_duration(range_seconds), "__interval": format_duration(step),
            "__rate_interval": format_duration(max(MIN_RATE_INTERVAL, 2 * step))}


# --- dashboards --------------------------------------------------------------------------

def template_values(doc: dict, range_seconds: int) -> dict[str, str]:
    """Every variable of a dashboard as Grafana would set it with everything selected."""
    values = builtin_variables(range_seconds)
    for var in doc.get("templating", {}).get("list", []):
        current = (var.get("current") or {}).get("value")
        if var.get("type") == "datasource":
            value = var.get("query", "prometheus")
        elif var.get("includeAll") and current in (None, "", "$__all", ["$__all"]):
            value = var.get("allValue") or ".*"
        elif isinstance(current, list):
            value = "|".join(current)
        elif current is not None:
            value = str(current)
        else:
            value = str(var.get("query", ""))
        values[var["name"]] = value
    return values


def substitute(text: str, values: dict[str, str], where: str) -> str:
    def one(match: re.Match) -> str:
        name = next(g for g in match.groups() if g)
        if name not in values:
            raise DashboardError(f"{where}: template variable ${name} is not defined "
                                 f"(defined: {', '.join(sorted(values))})")
        return values[name]

    return VARIABLE.sub(one, text)


def _panel(raw: dict, values: dict[str, str], where: str) -> Panel:
    title = raw.get("title", "").strip()
    where = f"{where}, panel {raw.get('id')} {title!r}"
    if not isinstance(raw.get("id"), int):
        raise DashboardError(f"{where}: no numeric id")
    defaults = raw.get("fieldConfig", {}).get("defaults", {})
    unit = defaults.get("unit", "")
    targets = tuple(Target(t.get("refId", ""), substitute(t["expr"], values, where), t.get("legendFormat", ""))
                    for t in raw.get("targets", []) if t.get("expr", "").strip())
    if not title or not unit or not targets:
        missing = [what for what, ok in (("title", title), ("unit", unit), ("targets[].expr", targets)) if not ok]
        raise DashboardError(f"{where}: no {', no '.join(missing)}")
    when = raw.get("kafkaPatterns", {}).get("dataOnlyWhen")
    condition = Condition(substitute(when["expr"], values, where), when["description"]) if when else None
    axis = defaults.get("custom", {}).get("axisLabel") or UNITS.get(unit, unit)
    return Panel(int(raw["id"]), title, raw.get("type", "timeseries"), unit, axis, raw.get("description", ""),
                 targets, condition)


def load_dashboard(path: Path, range_seconds: int = DEFAULT_RANGE_SECONDS) -> Dashboard:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DashboardError(f"cannot read the dashboard {path}: {e}") from e
    where = str(path)
    values = template_values(doc, range_seconds)
    # Rows are only headings; a collapsed row holds its panels.
    raw = [p for top in doc.get("panels", []) for p in ([top] if top.get("type") != "row" else top.get("panels", []))]
    return Dashboard(doc.get("uid", path.stem), doc.get("title", path.stem), doc.get("description", ""), path,
                     tuple(_panel(p, values, where) for p in raw))


def load_dashboards(directory: Path = DASHBOARD_DIR, range_seconds: int = DEFAULT_RANGE_SECONDS) -> list[Dashboard]:
    paths = sorted(Path(directory).glob("*.json"))
    if not paths:
        raise DashboardError(f"no dashboards (*.json) in {directory}")
    return [load_dashboard(p, range_seconds) for p in paths]


def panel_queries(dashboard_dir: Path = DASHBOARD_DIR,
                  range_seconds: int = DEFAULT_RANGE_SECONDS) -> Iterator[tuple[str, str, str]]:
    """(dashboard title, panel title, expr) of every target, variables substituted: what
    is sent to Prometheus, by the renderer and the tests alike."""
    for board in load_dashboards(dashboard_dir, range_seconds):
        for panel in board.panels:
            for target in panel.targets:
                yield board.title, panel.title, target.expr


# --- Prometheus --------------------------------------------------------------------------

def query_range(prometheus: str, expr: str, start: float, end: float, step: int,
                session: requests.Session | None = None) -> list[Series]:
    """The series of one PromQL expression over [start, end]. DashboardError when
    Prometheus cannot be reached or does not answer as Prometheus; QueryError when it
    refuses the query."""
    url = f"{prometheus.rstrip('/')}/api/v1/query_range"
    try:
        response = (session or requests).get(url, params={"query": expr, "start": start, "end": end, "step": step},
                                             timeout=TIMEOUT)
    except requests.RequestException as e:
        # requests' own message repeats the whole query URL; the OS error says it all.
        reason = re.search(r"\[Errno -?\d+\][^'\")]*", str(e))
        raise DashboardError(f"Prometheus at {prometheus} is unreachable "
                             f"({reason.group(0) if reason else type(e).__name__}): start it (make up) "
                             "or give its URL with --prometheus") from e
    try:
        body = response.json()
        status = body["status"]
    except (ValueError, KeyError, TypeError) as e:
        raise DashboardError(f"{url} did not answer as the Prometheus HTTP API (HTTP {response.status_code}): "
                             f"is {prometheus} a Prometheus?") from e
    if status != "success":
        raise QueryError(f"{body.get('errorType', 'error')}: {body.get('error', response.reason)}")
    return [Series(r.get("metric", {}), tuple(float(t) for t, _ in r["values"]),
                   tuple(float(v) for _, v in r["values"])) for r in body["data"]["result"]]


def legend(fmt: str, labels: dict[str, str]) -> str:
    """Grafana's legendFormat: {{label}} replaced, by nothing when the series lacks the
    label (the 0 of `or on() vector(0)`); without a format, or nothing left, the label set."""
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)
    text = " ".join(text.split()).strip(" /")
    return text or "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__") + "}"


# --- charts ------------------------------------------------------------------------------

def _scaled(value: float, base: int, prefixes: tuple[str, ...]) -> tuple[float, str]:
    i = 0
    while abs(value) >= base and i < len(prefixes) - 1:
        value, i = value / base, i + 1
    return value, prefixes[i]


def format_value(value: float, unit: str) -> str:
    """A tick or legend value the way Grafana shows the unit, short."""
    if value is None or math.isnan(value):
        return "–"
    if unit in ("bytes", "Bps"):
        v, p = _scaled(value, 1024, ("B", "KiB", "MiB", "GiB", "TiB"))
        return f"{v:.3g} {p}" + ("/s" if unit == "Bps" else "")
    if unit in ("s", "ms"):
        seconds = value / 1000 if unit == "ms" else value
        if seconds == 0:
            return "0"
        if abs(seconds) < 1:
            return f"{seconds * 1000:.3g} ms"
        return f"{seconds:.3g} s" if abs(seconds) < 120 else f"{seconds / 60:.3g} min"
    if unit in ("percent", "percentunit"):
        return f"{value * (100 if unit == 'percentunit' else 1):.3g}%"
    v, p = _scaled(value, 1000, ("", "k", "M", "G", "T"))
    return f"{v:.3g}{p}"


def axis_scale(unit: str, label: str, largest: float) -> tuple[float, str]:
    """(divisor, axis label) for values up to `largest`: the axis in round numbers of
    one prefix (KiB/s, ms, thousands), as Grafana picks one for the whole axis."""
    if unit in ("bytes", "Bps"):
        _, prefix = _scaled(largest, 1024, ("B", "KiB", "MiB", "GiB", "TiB"))
        power = ("B", "KiB", "MiB", "GiB", "TiB").index(prefix)
        return 1024.0 ** power, prefix + ("/s" if unit == "Bps" else "")
    if unit in ("s", "ms"):
        seconds = largest / 1000 if unit == "ms" else largest
        to_seconds = 1000.0 if unit == "ms" else 1.0
        if seconds < 1:
            return to_seconds / 1000, "milliseconds"
        return (to_seconds, "seconds") if seconds < 120 else (to_seconds * 60, "minutes")
    if unit == "percentunit":
        return 0.01, "percent"
    if largest >= 10_000_000:
        return 1e6, f"{label} (millions)".strip()
    if largest >= 10_000:
        return 1e3, f"{label} (thousands)".strip()
    return 1.0, label


STYLE = {
    "font.size": 9, "axes.titlesize": 11, "axes.titleweight": "bold", "axes.titlelocation": "left",
    "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#888888",
    "axes.grid": True, "grid.color": "#dddddd", "grid.linewidth": 0.6, "legend.fontsize": 8,
    "legend.frameon": False, "figure.facecolor": "white",
}
SIZE = (9.0, 3.4)  # inches, at 100 dpi: every image the same size, the legend inside it
MAX_LEGEND = 12


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def plot_panel(panel: Panel, results: list[tuple[Target, list[Series]]], path: Path,
               start: float, end: float, note: str = "") -> str:
    """One PNG of the panel's series, or a 'No data' placeholder saying why (`note`, else
    what Prometheus answered). Returns "" when series were drawn, else that reason."""
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    plt = _pyplot()
    lines: list[tuple[str, Series]] = []  # in the targets' order, by name within one: colours follow the JSON
    for target, series in results:
        named = [(legend(target.legend, s.labels), s) for s in series if s.has_data]
        lines += sorted(named, key=lambda line: line[0])
    if not lines:
        nan_only = any(series for _, series in results)
        note = note or ("Only NaN: nothing observed in this range" if nan_only
                        else "Prometheus returned no series for this range")
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=SIZE, layout="constrained")
        ax.set_title(panel.title)
        if not lines:
            ax.set_axis_off()
            ax.text(0.5, 0.55, "No data", ha="center", va="center", fontsize=18, color="#999999",
                    transform=ax.transAxes)
            ax.text(0.5, 0.35, note, ha="center", va="center", fontsize=9, color="#777777", wrap=True,
                    transform=ax.transAxes)
        else:
            finite = [v for _, s in lines for v in s.values if not math.isnan(v)]
            divisor, axis_label = axis_scale(panel.unit, panel.axis_label, max(abs(v) for v in finite))
            for i, (name, s) in enumerate(lines):
                last = next((v for v in reversed(s.values) if not math.isnan(v)), math.nan)
                label = f"{name[:40]}  ({format_value(last, panel.unit)})" if i < MAX_LEGEND else None
                ax.plot([dt.datetime.fromtimestamp(t) for t in s.times], [v / divisor for v in s.values],
                        linewidth=1.4, label=label)
            if len(lines) > MAX_LEGEND:
                ax.plot([], [], " ", label=f"… and {len(lines) - MAX_LEGEND} more series")
            if min(finite) >= 0:  # from 0, a little below so that a line at 0 clears the axis
                top = max(finite) / divisor * 1.1 if max(finite) > 0 else 1
                ax.set_ylim(bottom=-top * 0.03, top=top)
            if panel.unit in ("short", "none"):  # counts: no 0.2 tasks
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlim(dt.datetime.fromtimestamp(start), dt.datetime.fromtimestamp(end))
            locator = mdates.AutoDateLocator()
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_ylabel(axis_label)
            fig.legend(loc="outside right upper")
        fig.savefig(path, dpi=100)
        plt.close(fig)
    return "" if lines else note


# --- page --------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; background: #f4f5f7;
       color: #222; }
header { background: #1f2937; color: #f9fafb; padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: #cbd5e1; font-size: 14px; }
header a { color: #93c5fd; }
nav { margin-top: 10px; }
nav a { margin-right: 16px; font-size: 14px; }
main { max-width: 1700px; margin: 0 auto; padding: 8px 32px 40px; }
section h2 { margin: 28px 0 4px; font-size: 19px; }
section > p { margin: 0 0 12px; color: #555; font-size: 14px; max-width: 1100px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(620px, 1fr)); gap: 16px; }
figure { margin: 0; background: #fff; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.12); padding: 10px; }
figure img { width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; color: #444; padding: 6px 4px 0; }
figure.nodata { opacity: .75; }
figure.failed { outline: 2px solid #dc2626; }
details { margin-top: 4px; }
pre { white-space: pre-wrap; font-size: 12px; background: #f3f4f6; padding: 6px 8px; border-radius: 4px; }
"""


@dataclass(frozen=True)
class Drawn:
    panel: Panel
    image: str  # relative to index.html
    state: str  # "data", "nodata" or "failed"
    note: str = ""


def write_html(out: Path, prometheus: str, range_text: str, sections: list[tuple[Dashboard, list[Drawn]]]) -> Path:
    e = html.escape
    drawn = [d for _, ds in sections for d in ds]
    empty = sum(d.state != "data" for d in drawn)
    stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    nav = "".join(f'<a href="#{e(b.uid)}">{e(b.title)}</a>' for b, _ in sections)
    parts = ['<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
             f"<title>Kafka pattern platform: dashboards</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
             "<header>\n<h1>Kafka pattern platform: dashboards</h1>\n",
             f'<p>The last {e(range_text)} from <a href="{e(prometheus)}">{e(prometheus)}</a>, rendered {e(stamp)}: '
             f"{len(drawn)} panels, {empty} without data.</p>\n<nav>{nav}</nav>\n</header>\n<main>\n"]
    for board, ds in sections:
        parts.append(f"<section id=\"{e(board.uid)}\">\n<h2>{e(board.title)}</h2>\n<p>{e(board.description)}</p>\n"
                     "<div class=\"grid\">\n")
        for d in ds:
            exprs = "\n\n".join(f"{t.ref}: {t.expr}" for t in d.panel.targets)
            note = f"<br><em>{e(d.note)}</em>" if d.note else ""
            parts.append(f"<figure class=\"{d.state}\"><img src=\"{e(d.image)}\" alt=\"{e(d.panel.title)}\">"
                         f"<figcaption><strong>{e(d.panel.title)}</strong>: {e(d.panel.description)}{note}"
                         f"<details><summary>PromQL</summary><pre>{e(exprs)}</pre></details></figcaption></figure>\n")
        parts.append("</div>\n</section>\n")
    parts.append("</main>\n</body>\n</html>\n")
    index = out / "index.html"
    index.write_text("".join(parts))
    return index


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def render(prometheus: str, out: Path, range_text: str = DEFAULT_RANGE,
           dashboard_dir: Path = DASHBOARD_DIR) -> tuple[Path, int]:
    """Query every panel, draw it, write index.html. Returns the page and the number of
    failed queries; raises DashboardError when Prometheus cannot be reached."""
    range_seconds = parse_duration(range_text)
    boards = load_dashboards(dashboard_dir, range_seconds)  # an invalid file fails before any query
    end = time.time()
    start, step = end - range_seconds, step_for(range_seconds)
    results: dict[tuple[str, str, str], list[Series] | QueryError] = {}
    with requests.Session() as session:
        for key in panel_queries(dashboard_dir, range_seconds):
            if key not in results:
                try:
                    results[key] = query_range(prometheus, key[2], start, end, step, session)
                except QueryError as e:
                    results[key] = e
    out.mkdir(parents=True, exist_ok=True)
    sections, failed = [], 0
    for board in boards:
        (out / board.uid).mkdir(exist_ok=True)
        drawn = []
        for panel in board.panels:
            answers = [(t, results[(board.title, panel.title, t.expr)]) for t in panel.targets]
            errors = [f"{t.ref}: {a}" for t, a in answers if isinstance(a, QueryError)]
            failed += len(errors)
            if errors:
                note = "query failed: " + "; ".join(errors)
            elif panel.data_only_when:
                note = f"Data only while {panel.data_only_when.description}."
            else:
                note = ""
            image = f"{board.uid}/{panel.id:02d}-{_slug(panel.title)}.png"
            answered = [(t, a) for t, a in answers if not isinstance(a, QueryError)]
            empty = plot_panel(panel, answered, out / image, start, end, note)
            state = "failed" if errors else "nodata" if empty else "data"
            drawn.append(Drawn(panel, image, state, note if errors else empty))
        sections.append((board, drawn))
    return write_html(out, prometheus, range_text, sections), failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafka_patterns.monitoring.dashboard", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prometheus", help="its base URL (default: the inventory's monitoring host, "
                   f"else {DEFAULT_PROMETHEUS})")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for index.html and the PNGs "
                   "(default .run/dashboard)")
    p.add_argument("--range", default=DEFAULT_RANGE, help=f"how far back, e.g. 15m, 2h, 1d (default {DEFAULT_RANGE})")
    p.add_argument("--dashboards", type=Path, default=DASHBOARD_DIR, help="directory of the dashboard JSON files "
                   "(default: catalogue/metrics/dashboards)")
    a = p.parse_args(argv)
    try:
        parse_duration(a.range)
    except ValueError as e:
        p.error(f"--range: {e}")
    if a.prometheus is None:
        from kafka_patterns.config import inventory

        a.prometheus = inventory.load().prometheus_url or DEFAULT_PROMETHEUS
    try:
        index, failed = render(a.prometheus, a.out, a.range, a.dashboards)
    except DashboardError as e:
        print(f"dashboard: {e}", file=sys.stderr)
        return 2
    print(f"dashboard: {index}" + (f" ({failed} queries failed, drawn as placeholders)" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

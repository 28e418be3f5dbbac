"""Results -> tables (the ratios next to their figures), Markdown, JSON. Pure apart
from write(); the tables are what `make bench` prints."""

from __future__ import annotations

import json
from pathlib import Path

from tabulate import tabulate

from bench import ceiling, stats
from bench.grid import MODES, SIZES
from bench.stats import fmt, fmt_ratio, ratio


def find(measurements: list[dict], op: str, tool: str, **cell) -> dict | None:
    """The measurement of one op/tool on the cell matching every given cell field."""
    for m in measurements:
        if m["op"] == op and m["tool"] == tool and all(m["cell"][k] == v for k, v in cell.items()):
            return m
    return None


def _rps(m: dict | None) -> float | None:
    return None if m is None else m.get("records_per_s")


def _mbps(m: dict | None) -> float | None:
    return None if m is None else m.get("mb_per_s")


def _busy(m: dict | None) -> str:
    return "-" if m is None or m.get("cpu_busy") is None else f"{m['cpu_busy']:.0%}"


def produce_table(results: dict) -> tuple[list[str], list[list]]:
    ms, main = results["measurements"], results["grid"]["main"]
    disk = results.get("host", {}).get("disk_sync_write_mb_s")
    rows = []
    for c in main:
        cell = {k: c[k] for k in ("size", "mode", "partitions", "count")}
        j, p = find(ms, "produce", "java", **cell), find(ms, "produce", "python", **cell)
        rf = MODES[c["mode"]][0]
        rows.append([f"{c['size']} B", c["mode"], fmt(_rps(j)), fmt(_mbps(j), 1), fmt(_rps(p)), fmt(_mbps(p), 1),
                     fmt_ratio(ratio(_rps(p), _rps(j))),
                     f"{fmt(j and j.get('latency_p99_ms'))} / {fmt(p and p.get('latency_p99_ms'))}",
                     fmt_ratio(ceiling.fraction_of_ceiling(_mbps(j), disk, rf)),
                     fmt_ratio(ceiling.fraction_of_ceiling(_mbps(p), disk, rf)), f"{_busy(j)} / {_busy(p)}"])
    return (["record", "mode", "Java rec/s", "Java MB/s", "Python rec/s", "Python MB/s", "Python/Java",
             "p99 ms Java/Py", "Java/ceiling", "Py/ceiling", "CPU busy Java/Py"], rows)


def ceiling_table(results: dict) -> tuple[list[str], list[list]]:
    """The disk's synced write bandwidth, and the produce figure furthest from its ceiling, with why."""
    disk, far = results.get("host", {}).get("disk_sync_write_mb_s"), results.get("ceiling")
    if disk is None or far is None:
        return [], []
    cell = far["cell"]
    return (["disk synced MB/s", "RF 3 ceiling MB/s", "furthest from its ceiling", "MB/s", "of ceiling", "why"],
            [[fmt(disk), fmt(disk / 3), f"{far['tool']} {cell['size']} B {cell['mode']}", fmt(far["mb_per_s"], 1),
              fmt_ratio(far["fraction"]), far["reason"]]])


def durability_table(results: dict) -> tuple[list[str], list[list]]:
    """RF 3 acks=all (idempotent) relative to RF 1 acks=1, per record size and client."""
    ms, main = results["measurements"], results["grid"]["main"]
    rows = []
    for size in SIZES:
        cells = {c["mode"]: c for c in main if c["size"] == size}
        if {"rf3-acks-all", "rf1-acks-1"} - cells.keys():
            continue
        strong, weak = cells["rf3-acks-all"], cells["rf1-acks-1"]
        row = [f"{size} B"]
        for tool in ("java", "python"):
            s = find(ms, "produce", tool, **{k: strong[k] for k in ("size", "mode", "partitions", "count")})
            w = find(ms, "produce", tool, **{k: weak[k] for k in ("size", "mode", "partitions", "count")})
            row.append(fmt_ratio(ratio(_rps(s), _rps(w))))
        rows.append(row)
    return ["record", "Java RF3-all/RF1-1", "Python RF3-all/RF1-1"], rows


def consume_table(results: dict) -> tuple[list[str], list[list]]:
    ms, main = results["measurements"], results["grid"]["main"]
    rows = []
    for c in main:
        cell = {k: c[k] for k in ("size", "mode", "partitions", "count")}
        j, p, s = (find(ms, "consume", t, **cell) for t in ("java", "python", "spark"))
        rows.append([f"{c['size']} B", c["mode"], fmt(_rps(j)), fmt(_rps(p)), fmt(_rps(s)),
                     fmt_ratio(ratio(_rps(p), _rps(j))), fmt_ratio(ratio(_rps(s), _rps(j))),
                     fmt(_mbps(j), 1)])
    return (["record", "topic", "Java rec/s", "Python rec/s", "Spark rec/s", "Python/Java", "Spark/Java",
             "Java MB/s"], rows)


def growth_table(results: dict, axis: str) -> tuple[list[str], list[list]]:
    """How each figure moves along `axis` ("counts" or "partitions")."""
    ms = results["measurements"]
    rows = []
    for c in results["grid"][axis]:
        cell = {k: c[k] for k in ("size", "mode", "partitions", "count")}
        pj, pp = find(ms, "produce", "java", **cell), find(ms, "produce", "python", **cell)
        cj, cp, cs = (find(ms, "consume", t, **cell) for t in ("java", "python", "spark"))
        rows.append([f"{c['count']:,}", c["partitions"], fmt(_rps(pj)), fmt(_rps(pp)),
                     fmt_ratio(ratio(_rps(pp), _rps(pj))), fmt(_rps(cj)), fmt(_rps(cp)), fmt(_rps(cs)),
                     fmt_ratio(ratio(_rps(cp), _rps(cj))), fmt_ratio(ratio(_rps(cs), _rps(cj)))])
    return (["records", "partitions", "prod Java", "prod Py", "Py/Java", "cons Java", "cons Py", "cons Spark",
             "Py/Java", "Spark/Java"], rows)


def pipeline_table(results: dict) -> tuple[list[str], list[list]]:
    rows = []
    for p in results.get("pipeline", []):
        if not p.get("available"):
            rows.append([p["job"], "not available", "-", "-", "-", "-", "-", "-", "-", p.get("reason", "")])
            continue
        cores = p.get("spark_cores")
        rows.append([p["job"], fmt(p.get("input_rate")), fmt(p.get("latency_p50_ms")), fmt(p.get("latency_p99_ms")),
                     fmt(p.get("sink_records_per_s")), fmt(p.get("flowing_records_per_s")),
                     fmt_ratio(ratio(p.get("sink_records_per_s"), p.get("raw_consume_records_per_s"))),
                     _busy(p), "-" if cores is None else f"{cores:.2f}", p.get("note", "")])
    return (["job", "input rec/s", "e2e p50 ms", "e2e p99 ms", "burst rec/s", "flowing rec/s", "burst/raw Spark",
             "host CPU busy", "Spark cores", "note"], rows)


def stages_table(results: dict) -> tuple[list[str], list[list]]:
    rows = []
    for r in results.get("stages", []):
        if "failed" in r:
            rows.append([r["stage"], r["mode"], "-", "-", "-", "-", "-", "-", "-", "-", r["failed"]])
            continue
        rows.append([r["stage"], r["mode"], fmt(r["input_rate"]), fmt(r["latency_p50_ms"], 1),
                     fmt(r["latency_p99_ms"], 1), fmt(r["latency_max_ms"], 1), fmt(r["records"]),
                     fmt(r.get("drain_seconds"), 1), fmt(r.get("cpu_seconds_per_1e5"), 2), _busy(r), r["note"]])
    return (["stage", "mode", "input rec/s", "p50 ms", "p99 ms", "max ms", "records", "all in after s",
             "CPU s / 1e5 rec", "host CPU busy", "note"], rows)


def stages_vs_streams_table(results: dict) -> tuple[list[str], list[list]]:
    """Each Spark mode over the Kafka Streams peer of the same stage, measured in the same
    run at the same input rate: latency and CPU per record as ratios (Spark / Streams)."""
    by = {(r["stage"], r["mode"]): r for r in results.get("stages", []) if "failed" not in r}
    rows = []
    for (stage, mode), r in by.items():
        peer = by.get((stage, "kafka-streams"))
        if peer is None or mode == "kafka-streams":
            continue
        rows.append([stage, mode, *[stats.fmt_ratio(stats.ratio(r.get(k), peer.get(k)))
                                    for k in ("latency_p50_ms", "latency_p99_ms", "latency_max_ms",
                                              "cpu_seconds_per_1e5")]])
    return ["stage", "Spark mode", "p50 / Streams", "p99 / Streams", "max / Streams", "CPU per record / Streams"], rows


def _sustained_rate(r: dict) -> str:
    """The highest rate held, "+" when it is the highest tried (the stage may hold more)."""
    best = r.get("highest_sustained_rate")
    return "-" if best is None else f"{fmt(best)}{'+' if r.get('capped') else ''}"


def sustained_table(results: dict) -> tuple[list[str], list[list]]:
    """The highest rate each mode held without a growing lag, each hold's verdict, and the
    Spark / Streams ratio of the highest rates."""
    measured = results.get("sustained", [])
    streams = next((r for r in measured if r["mode"] == "kafka-streams" and "failed" not in r), {})
    rows = []
    for r in measured:
        if "failed" in r:
            rows.append([r["stage"], r["mode"], "-", "-", "-", r["failed"]])
            continue
        holds = "; ".join(f"{fmt(h['rate'])}/s {'yes' if h['sustained'] else 'no'}: {h['why']}, host "
                          f"{_busy(h)}" for h in r["holds"])
        ratio = "-" if r["mode"] == "kafka-streams" else fmt_ratio(
            stats.ratio(r["highest_sustained_rate"], streams.get("highest_sustained_rate")))
        rows.append([r["stage"], r["mode"], _sustained_rate(r), ratio, r["holds"][0]["seconds"] if r["holds"] else "-",
                     holds])
    return ["stage", "mode", "highest sustained rec/s", "/ Streams", "hold s", "each rate held"], rows


def batches_table(results: dict) -> tuple[list[str], list[list]]:
    """Where the micro-batches of each measured query spend their time (median ms per
    batch that read something): what bounds the streaming latency that is left."""
    rows = []
    measured = [(p["job"], p) for p in results.get("pipeline", [])]
    measured += [(f"{r['stage']} ({r['mode']})", r) for r in results.get("stages", [])]
    for name, m in measured:
        for query, b in sorted((m.get("batches") or {}).items()):
            rows.append([name, query, b["batches"], fmt(b["rows"]),
                         *[fmt(b[phase]) for phase in stats.BATCH_PHASES], fmt(b["stateCommit"])])
    return (["measured", "query", "batches", "rows", *stats.BATCH_PHASES, "state commit"], rows)


def security_table(results: dict) -> tuple[list[str], list[list]]:
    rows = []
    for r in results.get("security", {}).get("summary", []):
        plain, secure = r["plaintext"], r["secure"]
        p99 = ""
        if r["op"] == "produce":
            p99 = f"{fmt(plain['latency_p99_ms'])} / {fmt(secure['latency_p99_ms'])}"
        rows.append([f"{r['size']} B", r["op"], fmt(plain["records_per_s"]), fmt(plain["mb_per_s"], 1),
                     fmt(secure["records_per_s"]), fmt(secure["mb_per_s"], 1),
                     fmt_ratio(r["secure_over_plaintext"]), p99, secure["runs"]])
    return (["record", "op", "plain rec/s", "plain MB/s", "secure rec/s", "secure MB/s", "secure/plain",
             "p99 ms plain/secure", "runs"], rows)


SECTIONS = (
    ("Produce (records/s, MB/s; Python = confluent-kafka via kafka_patterns.clients.kafka)", produce_table),
    ("One host's ceiling (the disk's synced write bandwidth, measured in this run, divided by the replication "
     "factor: RF 3 on one host writes every byte three times) and the figure furthest from it", ceiling_table),
    ("Durability cost (RF 3 acks=all + idempotence vs RF 1 acks=1)", durability_table),
    ("Consume (whole topic; Java = fetch rate without group join)", consume_table),
    ("Growth with record count (100 B, RF 3 acks=all)", lambda r: growth_table(r, "counts")),
    ("Growth with partitions (100 B, RF 3 acks=all)", lambda r: growth_table(r, "partitions")),
    ("Pipeline (e2e = event time -> sink at the fixed input rate; burst rec/s = a burst drained into the sink, "
     "flowing rec/s = the same once the first of it arrived; raw Spark = the Spark read of 100 B RF 3; host CPU "
     "busy and Spark cores = the host's CPUs busy and the cores the jobs' Spark driver used while the readings "
     "were fed at the fixed rate)",
     pipeline_table),
    ("Stateless stages, one hop each, per mode (event time -> read back from the stage's output topic at the fixed "
     "input rate; micro-batch = a trigger every 0.5 s, real-time = Spark's real-time mode, kafka-streams = the "
     "Kafka Streams peer of bench/streams)", stages_table),
    ("Spark against Kafka Streams, per stage (ratios of the figures above, same run, same input rate)",
     stages_vs_streams_table),
    ("Highest sustained input rate (the clean stage held at each rate without its lag growing by 2 % of the rate "
     "per second; + = the highest rate tried; the Streams ratio: Spark's highest over the peer's)", sustained_table),
    ("What bounds the latency: each query's micro-batches, median ms per batch that read something (Spark's "
     "progress: latestOffset = asking Kafka for offsets, addBatch = running the plan and writing the sink, "
     "walCommit/commitOffsets = the checkpoint's offset and commit logs, triggerExecution = the whole batch; "
     "state commit = the state stores' commit)", batches_table),
    ("Security cost (Java perf tools, RF 3 acks=all + idempotence; secure = the local cluster: TLS, SCRAM-SHA-512, "
     "mutual TLS between nodes, ACLs; plain = the same nodes' config and JVMs without them, started for this run; "
     "medians of alternating runs)", security_table),
)


def tables(results: dict, fmt_name: str) -> str:
    parts = []
    for title, build in SECTIONS:
        headers, rows = build(results)
        if rows:
            heading = f"## {title}" if fmt_name == "github" else f"{title}"
            parts.append(f"{heading}\n\n{tabulate(rows, headers, tablefmt=fmt_name, disable_numparse=True)}")
    return "\n\n".join(parts)


def markdown(results: dict, plots: list[str]) -> str:
    h = results["host"]
    head = (f"# Benchmark {results['started']}{' (QUICK)' if results['quick'] else ''}\n\n"
            f"Host: {h['cpus']} CPUs, {h['platform']}; Kafka {h['kafka']}, Spark {h['spark']}, "
            f"confluent-kafka {h['confluent_kafka']}. Run took {results['seconds']:.0f} s. Every figure is "
            "measured in this run; ratios are figure / baseline. Java = Kafka's ProducerPerformance / "
            "ConsumerPerformance (unthrottled; both producers batch alike: linger.ms=5, "
            "batch.size=1000000); each producer writes `count` records into the "
            "cell's topic, each consumer reads all of them. Small counts mostly time client start-up (JVM "
            "warm-up, idempotent producer id, metadata, Spark job scheduling): the growth tables show how the "
            "figures settle with more records.\n")
    failed = "".join(f"\n**Failed, no figures**: {f}\n" for f in results.get("failed", []))
    imgs = "\n".join(f"![{Path(p).stem}]({Path(p).name})" for p in plots)
    return f"{head}{failed}\n{tables(results, 'github')}\n\n{imgs}\n"


def write(results: dict, directory: Path, stamp: str, plots: list[str]) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    js, md = directory / f"{stamp}.json", directory / f"{stamp}.md"
    js.write_text(json.dumps(results, indent=1, default=str) + "\n")
    md.write_text(markdown(results, plots))
    return js, md

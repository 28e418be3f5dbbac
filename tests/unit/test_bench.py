"""The benchmark harness's pure parts: arithmetic, parsing the perf tools' reports, the
grid and the summary tables (no cluster, nothing is measured here)."""

import sys
from dataclasses import asdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root holds bench/

from bench import grid, java_perf, report, stats

PRODUCER_OUT = """\
20001 records sent, 4000.2 records/sec (0.38 MB/sec), 120.5 ms avg latency, 400.0 ms max latency.
100000 records sent, 45045.045045 records/sec (4.30 MB/sec), 512.34 ms avg latency, 900.00 ms max latency, \
480 ms 50th, 850 ms 95th, 890 ms 99th, 899 ms 99.9th.
"""
CONSUMER_OUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-22 22:19:10:001, 2026-11-22 22:19:11:001, 3.8147, 3.8147, 40000, 40000.0, 500, 500, 7.6294, 80000.0
"""


def test_rate_ratio_and_missing_values():
    assert stats.rate(100, 2) == 50
    assert stats.rate(100, 0) is None
    assert stats.mb_per_s(1024 * 1024, 1, 1) == 1
    assert stats.ratio(3, 4) == 0.75
    assert stats.ratio(None, 4) is None
    assert stats.ratio(3, 0) is None


def test_percentile_is_nearest_rank():
    values = list(range(100, 0, -1))  # unsorted on purpose
    assert stats.percentile(values, 50) == 50
    assert stats.percentile(values, 99) == 99
    assert stats.percentile(values, 100) == 100
    assert stats.percentile(values, 0) == 1
    assert stats.percentile([7.0], 99) == 7.0
    assert stats.percentile([], 50) is None
    with pytest.raises(ValueError):
        stats.percentile([1], 101)


def test_formatting():
    assert stats.fmt(1234567.8) == "1,234,568"
    assert stats.fmt(3.14159, 1) == "3.1"
    assert stats.fmt(None) == "-"
    assert stats.fmt_ratio(0.5123) == "0.51x"
    assert stats.fmt_ratio(None) == "-"


def test_producer_report_uses_the_final_summary_line():
    r = java_perf.parse_producer(PRODUCER_OUT)
    assert r == {"records": 100000, "records_per_s": 45045.045045, "mb_per_s": 4.30, "latency_avg_ms": 512.34,
                 "latency_p50_ms": 480.0, "latency_p99_ms": 890.0}
    with pytest.raises(ValueError):
        java_perf.parse_producer("Exception in thread main")


def test_consumer_report_headline_is_the_fetch_rate():
    r = java_perf.parse_consumer("WARN something\n" + CONSUMER_OUT)
    assert r["records"] == 40000
    assert r["records_per_s"] == 80000.0  # fetch.nMsg.sec, group join excluded
    assert r["total_records_per_s"] == 40000.0
    assert r["rebalance_ms"] == 500
    with pytest.raises(ValueError):
        java_perf.parse_consumer("no report")


def test_quick_grid_is_smaller_and_cells_are_not_repeated():
    quick, full = grid.grid(True), grid.grid(False)
    assert len(quick.cells()) < len(full.cells())
    for g in (quick, full):
        assert len(g.cells()) == len(set(g.cells()))
        assert {c.size for c in g.main} == set(grid.SIZES) and {c.mode for c in g.main} == set(grid.MODES)
    assert [c.count for c in full.counts] == [10_000, 100_000, 1_000_000]
    assert [c.partitions for c in full.partitions] == [1, 3, 6, 12]


def _results():
    cells = [grid.Cell(100, "rf3-acks-all", 3, 1000), grid.Cell(100, "rf1-acks-1", 3, 1000)]
    ms = []
    for c, base in zip(cells, (1000.0, 4000.0), strict=True):
        for op, tool, factor in (("produce", "java", 1), ("produce", "python", 2), ("consume", "java", 10),
                                 ("consume", "python", 5), ("consume", "spark", 1)):
            ms.append({"cell": asdict(c), "op": op, "tool": tool, "records_per_s": base * factor, "mb_per_s": 1.0})
    return {"grid": {"main": [asdict(c) for c in cells], "counts": [asdict(cells[0])], "partitions": []},
            "measurements": ms,
            "pipeline": [{"job": "pipeline-sink", "available": False, "reason": "not there"},
                         {"job": "exactly-once", "available": True, "input_rate": 500, "sink_records_per_s": 2500.0,
                          "latency_p50_ms": 900.0, "latency_p99_ms": 1500.0, "raw_consume_records_per_s": 10000.0,
                          "cpu_busy": 0.9, "spark_cores": 1.25}]}


def test_tables_put_each_ratio_next_to_its_figures():
    r = _results()
    _, produce = report.produce_table(r)
    assert produce[0][2] == "1,000" and produce[0][4] == "2,000" and produce[0][6] == "2.00x"
    _, durability = report.durability_table(r)
    assert durability == [["100 B", "0.25x", "0.25x"]]  # 1000 / 4000 for both clients
    _, consume = report.consume_table(r)
    assert consume[0][5:7] == ["0.50x", "0.10x"]  # Python/Java, Spark/Java
    _, growth = report.growth_table(r, "counts")
    assert growth[0][4] == "2.00x" and growth[0][8] == "0.50x"
    _, pipeline = report.pipeline_table(r)
    assert pipeline[0][1] == "not available"
    assert pipeline[1][4] == "2,500" and pipeline[1][5] == "-" and pipeline[1][6] == "0.25x"
    assert pipeline[1][7:9] == ["90%", "1.25"]  # host CPU busy, the Spark driver's cores while fed


def test_summary_text_has_every_section_with_rows():
    text = report.tables(_results(), "simple")
    assert "Produce" in text and "Durability" in text and "Pipeline" in text
    assert "Growth with partitions" not in text  # no cells on that axis: no empty table


def test_arrival_latency_is_when_the_sink_count_first_covers_the_record():
    # 2 records of the run were in the sink before; the 3 measured ones were sent at 0, 10, 20 ms.
    timeline = [(5.0, 2), (50.0, 3), (80.0, 3), (100.0, 5)]
    assert stats.arrival_latencies([0.0, 10.0, 20.0], 2, timeline) == [50.0, 90.0, 80.0]
    # A record the sink never reached is left out, not counted as zero.
    assert stats.arrival_latencies([0.0, 10.0], 0, [(30.0, 1)]) == [30.0]
    assert stats.arrival_latencies([0.0], 0, []) == []


def test_flow_rate_starts_at_the_first_arrival_of_the_burst():
    timeline = [(0.0, 10), (1000.0, 10), (2000.0, 40), (3000.0, 70), (4000.0, 110)]
    assert stats.flow_rate(timeline, 10, 110) == 35.0  # (110 - 40) records in 2 s
    assert stats.flow_rate([(0.0, 10), (500.0, 110)], 10, 110) is None  # all in one poll
    assert stats.flow_rate(timeline, 10, 500) is None  # never completed


SECURE_NODE = {
    "process.roles": "broker,controller", "node.id": "2", "controller.quorum.voters": "1@127.0.0.1:11093",
    "controller.listener.names": "CONTROLLER", "listeners": "CLIENT://127.0.0.1:12092,CONTROLLER://127.0.0.1:12093",
    "advertised.listeners": "CLIENT://127.0.0.1:12092", "inter.broker.listener.name": "REPLICATION",
    "listener.security.protocol.map": "CONTROLLER:SSL,REPLICATION:SSL,CLIENT:SASL_SSL",
    "ssl.keystore.type": "PEM", "ssl.keystore.location": "/x/keystore.pem",
    "listener.name.client.sasl.enabled.mechanisms": "SCRAM-SHA-512",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": "false", "super.users": "User:admin", "log.dirs": "/secure/data",
    "broker.rack": "rack-2", "min.insync.replicas": "2", "default.replication.factor": "3",
    "unclean.leader.election.enable": "false", "offsets.topic.num.partitions": "12",
}


def test_plaintext_baseline_is_the_secure_config_without_security():
    from bench.plaintext_cluster import PlainNode, plaintext_config

    node = PlainNode(2, 27020, 27021, Path("/tmp/plain/node-2"))
    props = plaintext_config(SECURE_NODE, node, "1@127.0.0.1:27011,2@127.0.0.1:27021")
    # Security is gone: no TLS, SASL, authorizer or super user key, every listener plain text.
    assert not [k for k in props if k.startswith(("ssl.", "sasl.", "listener.name.", "authorizer", "super.users",
                                                   "allow.everyone"))]
    assert props["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:27020,CONTROLLER://127.0.0.1:27021"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:27011,2@127.0.0.1:27021"
    assert props["log.dirs"] == "/tmp/plain/node-2/data"
    # Everything else, the guarantees and the rack first, is the secure node's own.
    for key in ("min.insync.replicas", "default.replication.factor", "unclean.leader.election.enable",
                "broker.rack", "offsets.topic.num.partitions"):
        assert props[key] == SECURE_NODE[key]


def test_a_failing_part_of_the_run_is_named_and_the_parts_before_it_kept():
    from bench.__main__ import measured_part

    failed: list[str] = []
    assert measured_part("the stages", lambda: [{"stage": "clean"}], failed) == [{"stage": "clean"}]

    def broken():
        raise RuntimeError("a plain-text baseline node exited")

    assert measured_part("the security cost", broken, failed) is None
    assert failed == ["the security cost: a plain-text baseline node exited"]


def test_a_baseline_node_runs_the_secure_nodes_jvm_without_its_metrics_agent():
    from bench.plaintext_cluster import baseline_command

    secure = ["/usr/bin/java", "-Xmx384m", "-Dkafka.logs.dir=/secure/logs",
              "-javaagent:/c/agents/jmx_prometheus_javaagent-1.0.1.jar=127.0.0.1:11404:/r/kafka-metrics.yml",
              "-cp", "/k/libs/*", "kafka.Kafka", "/secure/server.properties"]
    argv = baseline_command(secure, Path("/secure/server.properties"), Path("/plain/node-1/server.properties"),
                            Path("/plain/node-1"))
    # The agent would bind the secure node's metrics port: the baseline node exited on it.
    assert argv == ["/usr/bin/java", "-Xmx384m", "-Dkafka.logs.dir=/plain/node-1", "-cp", "/k/libs/*", "kafka.Kafka",
                    "/plain/node-1/server.properties"]


def test_security_cost_is_the_median_of_each_side_and_their_ratio():
    from bench.security_cost import summary

    def m(side, op, rps, repeat):
        return {"size": 1024, "repeat": repeat, "side": side, "op": op, "records_per_s": rps, "mb_per_s": rps / 1000,
                "latency_p99_ms": 10.0}

    rows = summary([m("plaintext", "produce", 100, 0), m("secure", "produce", 60, 0),
                    m("plaintext", "produce", 140, 1), m("secure", "produce", 80, 1),
                    m("plaintext", "produce", 120, 2), m("secure", "produce", 90, 2),
                    m("secure", "consume", 50, 0), m("plaintext", "consume", 100, 0)])
    produce, consume = rows
    assert (produce["op"], produce["plaintext"]["records_per_s"], produce["secure"]["records_per_s"]) == \
        ("produce", 120, 80)
    assert produce["secure_over_plaintext"] == pytest.approx(80 / 120)
    assert produce["secure"]["runs"] == 3
    assert consume["secure_over_plaintext"] == pytest.approx(0.5)
    table = report.tables({"measurements": [], "grid": {"main": [], "counts": [], "partitions": []},
                           "security": {"summary": rows}}, "simple")
    assert "Security cost" in table and "0.67x" in table and "0.50x" in table


def test_the_stages_table_sets_each_mode_side_by_side_and_keeps_a_failed_stage():
    results = {"measurements": [], "grid": {"main": [], "counts": [], "partitions": []}, "stages": [
        {"stage": "clean", "mode": "micro-batch", "input_rate": 1000, "records": 30000, "latency_p50_ms": 1042.6,
         "latency_p99_ms": 1940.3, "latency_max_ms": 2203.4, "note": "trigger 0.5 s"},
        {"stage": "clean", "mode": "real-time", "input_rate": 1000, "records": 30000, "latency_p50_ms": 198.8,
         "latency_p99_ms": 1166.0, "latency_max_ms": 1669.9, "note": "real-time mode"},
        {"stage": "content-filter", "mode": "real-time", "failed": "content-filter stopped: boom"}]}
    headers, rows = report.stages_table(results)
    assert headers[:5] == ["stage", "mode", "input rec/s", "p50 ms", "p99 ms"]
    assert rows[0][:5] == ["clean", "micro-batch", "1,000", "1,042.6", "1,940.3"]
    assert rows[1][:5] == ["clean", "real-time", "1,000", "198.8", "1,166.0"]
    assert rows[2][-1] == "content-filter stopped: boom"
    assert "Stateless stages" in report.tables(results, "simple")


def test_the_bench_stages_are_stateless_jobs_that_can_run_in_real_time_mode():
    from bench import stages
    from kafka_patterns.config import catalogue

    for stage in stages.STAGES:
        for job in stage.jobs:
            assert catalogue.job(job).engine == "spark"
        assert stage.output in catalogue.job(stage.jobs[-1]).output_topics


def test_every_job_of_a_bench_stage_has_a_kafka_streams_peer_of_its_own_user():
    from bench import stages, streams_peer
    from kafka_patterns.config import catalogue

    users = {u["name"]: u for u in catalogue.load()["users"]}
    for stage in stages.STAGES:
        for job in stage.jobs:
            (peer,) = [s for s, j in streams_peer.PEERS.items() if j == job]
            assert streams_peer.user(peer) in users, f"catalogue users lack {streams_peer.user(peer)}"


def test_the_streams_comparison_divides_each_spark_mode_by_the_peer_of_its_stage():
    stage = {"stage": "clean", "input_rate": 1000, "records": 30000, "note": ""}
    results = {"measurements": [], "grid": {"main": [], "counts": [], "partitions": []}, "stages": [
        {**stage, "mode": "micro-batch", "latency_p50_ms": 1000.0, "latency_p99_ms": 2000.0, "latency_max_ms": 3000.0,
         "cpu_seconds_per_1e5": 30.0},
        {**stage, "mode": "real-time", "latency_p50_ms": 150.0, "latency_p99_ms": 700.0, "latency_max_ms": 900.0,
         "cpu_seconds_per_1e5": 20.0},
        {**stage, "mode": "kafka-streams", "latency_p50_ms": 50.0, "latency_p99_ms": 350.0, "latency_max_ms": 450.0,
         "cpu_seconds_per_1e5": 10.0},
        {**stage, "stage": "content-filter", "mode": "real-time", "latency_p50_ms": 1.0, "latency_p99_ms": 1.0,
         "latency_max_ms": 1.0}]}  # no peer measured for it: no row
    headers, rows = report.stages_vs_streams_table(results)
    assert headers[1:4] == ["Spark mode", "p50 / Streams", "p99 / Streams"]
    assert rows == [["clean", "micro-batch", "20.00x", "5.71x", "6.67x", "3.00x"],
                    ["clean", "real-time", "3.00x", "2.00x", "2.00x", "2.00x"]]
    assert "Spark against Kafka Streams" in report.tables(results, "simple")


def test_a_rate_is_sustained_when_the_lag_stays_flat_and_not_when_it_grows():
    from bench import sustained

    warm = sustained.PACED_WARMUP_SECONDS
    # A lag that wanders around 300 records: no trend.
    flat = [(t, 300 + (40 if t % 2 else -40)) for t in range(warm, warm + 60)]
    assert sustained.verdict(flat, 1000, 1000.0)[0] is True
    # A lag growing by 50 records/s at 1,000/s: 5 % of the rate per second.
    growing = [(t, 50 * t) for t in range(warm, warm + 60)]
    ok, why = sustained.verdict(growing, 1000, 1000.0)
    assert ok is False and "+50 rec/s" in why and "limit 20" in why
    # The paced warm-up's step from idle is left out: a jump then, flat after.
    step = [(t, 5000 * t) for t in range(warm)] + [(t, 300) for t in range(warm, warm + 60)]
    assert sustained.verdict(step, 1000, 1000.0)[0] is True
    # A feeder that fell short of the rate says nothing about the stage.
    ok, why = sustained.verdict(flat, 8000, 5000.0)
    assert ok is None and "5,000/s of 8,000/s" in why
    assert sustained.slope([(0, 1)]) is None


def test_the_sustained_table_names_the_highest_rate_held_and_its_ratio_to_streams():
    def held(rate, ok, busy=0.9):
        return {"rate": rate, "seconds": 60, "sustained": ok, "why": "lag +1 rec/s (limit 20)", "cpu_busy": busy}

    results = {"measurements": [], "grid": {"main": [], "counts": [], "partitions": []}, "sustained": [
        {"stage": "clean", "mode": "micro-batch", "highest_sustained_rate": 1000, "capped": False,
         "holds": [held(500, True), held(1000, True), held(2000, False, 1.0)]},
        {"stage": "clean", "mode": "real-time", "failed": "stopped: boom"},
        {"stage": "clean", "mode": "kafka-streams", "highest_sustained_rate": 4000, "capped": True,
         "holds": [held(r, True) for r in (500, 1000, 2000, 4000)]}]}
    headers, rows = report.sustained_table(results)
    assert headers[2:4] == ["highest sustained rec/s", "/ Streams"]
    assert rows[0][:5] == ["clean", "micro-batch", "1,000", "0.25x", 60]
    assert "2,000/s no: lag +1 rec/s (limit 20), host 100%" in rows[0][5]
    assert rows[1][-1] == "stopped: boom"
    assert rows[2][2:4] == ["4,000+", "-"]
    assert "Highest sustained input rate" in report.tables(results, "simple")


def progress(rows: int, **phases) -> dict:
    """One StreamingQueryProgress as Spark reports it (a dict), with the given phase times."""
    return {"numInputRows": rows, "durationMs": phases,
            "stateOperators": [{"commitTimeMs": phases.get("addBatch", 0) // 10}]}


def test_the_batch_breakdown_takes_medians_over_the_batches_that_read_something():
    batches = [progress(0, addBatch=1, triggerExecution=2),  # an empty batch: not counted
               progress(10, addBatch=100, walCommit=20, triggerExecution=200),
               progress(30, addBatch=300, walCommit=40, triggerExecution=400),
               progress(20, addBatch=200, walCommit=30, triggerExecution=300)]
    b = stats.batch_breakdown(batches)
    assert (b["batches"], b["rows"], b["addBatch"], b["walCommit"], b["triggerExecution"]) == (3, 20, 200, 30, 300)
    assert b["stateCommit"] == 20 and b["latestOffset"] is None  # a phase never reported: no figure
    assert stats.batch_breakdown([])["batches"] == 0


def test_the_batches_table_names_each_query_of_each_measurement():
    b = stats.batch_breakdown([progress(5, addBatch=50, triggerExecution=80)])
    results = {"measurements": [], "grid": {"main": [], "counts": [], "partitions": []},
               "pipeline": [{"job": "exactly-once", "available": True, "batches": {"exactly-once-main": b}}],
               "stages": [{"stage": "clean", "mode": "micro-batch", "batches": {"pipeline-clean-main": b}}]}
    headers, rows = report.batches_table(results)
    assert [r[:2] for r in rows] == [["exactly-once", "exactly-once-main"],
                                     ["clean (micro-batch)", "pipeline-clean-main"]]
    assert rows[0][headers.index("addBatch")] == "50" and rows[0][headers.index("state commit")] == "5"
    assert report.batches_table in [build for _, build in report.SECTIONS]


def test_a_run_with_warm_up_records_reports_its_steady_state_line():
    out = PRODUCER_OUT + ("80000 steady state records sent, 60000.5 records/sec (5.72 MB/sec), 300.00 ms avg "
                          "latency, 700.00 ms max latency, 280 ms 50th, 600 ms 95th, 650 ms 99th, 690 ms 99.9th.\n")
    r = java_perf.parse_producer(out)
    assert (r["records"], r["records_per_s"], r["latency_p99_ms"]) == (80000, 60000.5, 650.0)
    assert java_perf.parse_producer(PRODUCER_OUT)["records"] == 100000  # no warm-up: the final line


def test_a_produce_figure_is_a_fraction_of_the_disk_bandwidth_over_its_replication_factor():
    from bench import ceiling

    assert ceiling.fraction_of_ceiling(10.0, 90.0, 3) == pytest.approx(10 / 30)
    assert ceiling.fraction_of_ceiling(10.0, None, 3) is None
    r = _results() | {"host": {"disk_sync_write_mb_s": 300.0}}
    headers, rows = report.produce_table(r)
    assert rows[0][headers.index("Java/ceiling")] == "0.01x"  # 1 MB/s of a 100 MB/s RF 3 ceiling


def test_the_furthest_figure_is_named_with_the_cpu_as_the_reason_when_the_cores_were_busy():
    from bench import ceiling

    cell = {"size": 100, "mode": "rf3-acks-all", "partitions": 6, "count": 1000}
    ms = [{"cell": cell, "op": "produce", "tool": "java", "mb_per_s": 20.0, "cpu_busy": 0.97},
          {"cell": cell, "op": "produce", "tool": "python", "mb_per_s": 30.0, "cpu_busy": 0.5},
          {"cell": cell, "op": "consume", "tool": "java", "mb_per_s": 1.0}]
    far = ceiling.furthest(ms, 300.0, {"rf3-acks-all": 3})
    assert (far["tool"], far["fraction"]) == ("java", pytest.approx(0.2)) and far["reason"].startswith("CPU: ")
    ms[0]["cpu_busy"] = 0.4
    assert ceiling.furthest(ms, 300.0, {"rf3-acks-all": 3})["reason"].startswith("neither the disk nor the CPU")
    assert ceiling.furthest(ms, None, {"rf3-acks-all": 3}) is None


def test_the_disk_probe_and_the_cpu_sampler_measure_something(tmp_path):
    from bench import ceiling

    assert ceiling.disk_sync_write_mb_s(tmp_path, mib=4) > 0
    assert not list(tmp_path.iterdir()), "the probe file is removed"
    with ceiling.CpuBusy() as cpu:
        sum(range(200_000))
    assert cpu.fraction is None or 0.0 <= cpu.fraction <= 1.0


def test_a_process_cpu_use_is_read_in_cores_and_unknown_without_a_process():
    import os

    from bench import ceiling

    start = ceiling.process_cpu_seconds(os.getpid())
    with ceiling.CpuUse(os.getpid()) as cpu:
        # Work until the kernel has counted CPU for this process: it counts in clock
        # ticks (10 ms), so a fixed small loop can read as 0.0 on a busy host.
        while ceiling.process_cpu_seconds(os.getpid()) - start < 0.05:
            sum(i * i for i in range(50_000))
    assert cpu.cores is not None and cpu.cores > 0 and 0 <= cpu.fraction <= 1
    with ceiling.CpuUse(None) as unknown:
        pass
    assert unknown.cores is None and ceiling.process_cpu_seconds(None) is None


def test_the_stages_plot_is_drawn_from_the_stages_alone(tmp_path):
    from bench import plots

    stage = {"stage": "clean", "input_rate": 1000, "records": 300, "note": "", "latency_p50_ms": 20.0,
             "latency_p99_ms": 400.0, "latency_max_ms": 500.0, "cpu_seconds_per_1e5": 12.0}
    results = {"measurements": [], "grid": {"main": [], "counts": [], "partitions": []},
               "stages": [{**stage, "mode": mode} for mode in ("micro-batch", "real-time", "kafka-streams")]
               + [{"stage": "content-filter", "mode": "real-time", "failed": "boom"}]}
    (written,) = plots.write(results, tmp_path, "t")
    assert written.endswith("t-stages.png") and (tmp_path / "t-stages.png").stat().st_size > 10_000

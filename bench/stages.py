"""Part 3b: the stateless Kafka-to-Kafka stages one hop at a time, in micro-batch mode
(a trigger every TRIGGER_SECONDS), in Spark's real-time mode and as their Kafka Streams
peers (bench/streams: the same topics, contract and dead letters, record at a time),
side by side, with the CPU seconds each spent per 10^5 records (the Spark driver's JVM,
the peers' JVMs) and the host's CPU busy while the readings were fed.

Each stage runs continuously in this process (bench.pipeline.JobThread) from the end
of its input, with a fresh checkpoint. Readings with event time = send time are fed at
a fixed rate; a consumer on the stage's output topic takes each of this run's records
as it arrives, and its latency is the arrival minus its event time. So a figure holds
the produce, the stage and the fetch. The first WARMUP readings are left out (query
start, first connections), and so are the first PACED_WARMUP_SECONDS of the fixed rate
(the step from idle to the rate).

Real-time mode runs a long-running task per input partition of every query, so this
process's Spark needs that many task slots (SLOTS, set before its session starts)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from confluent_kafka import TopicPartition

from bench import ceiling, stats, streams_peer
from bench.pipeline import (
    PACED_WARMUP_SECONDS,
    TRIGGER_SECONDS,
    WARMUP,
    JobThread,
    batch_breakdowns,
    feed,
    feed_producer,
    input_ends,
    spark_driver_pid,
    wait_for_count,
)
from bench.runner import progress
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.config.catalogue import ROOT
from pattern_harness import job_runs

SPARK_MODES = ("micro-batch", "real-time")
STREAMS = "kafka-streams"
MODES = (*SPARK_MODES, STREAMS)
# The peers' producers linger as the Spark jobs' Kafka sinks do (spark.kafka_sink_options),
# not Kafka Streams' default 100 ms.
PEER_SETTINGS = ("producer.linger.ms=5",)
PER_RECORDS = 100_000  # CPU seconds per this many records
# clean + enrich in real-time mode: 2 queries x 6 partitions (and room for a third).
SLOTS = 32


@dataclass(frozen=True)
class Stage:
    name: str
    jobs: tuple[str, ...]  # started in order; the first reads the topic fed
    output: str  # the topic whose records are timed
    temperature: float = 20.0  # of the fed readings (content-filter: hot, so each goes to heat)


STAGES = (
    Stage("clean", ("pipeline-clean",), "weather.readings.cleaned"),
    Stage("clean -> enrich", ("pipeline-clean", "pipeline-enrich"), "weather.readings.enriched"),
    Stage("content-filter", ("content-filter",), "weather.alerts.heat", temperature=35.0),
)


class Peer:
    """A Kafka Streams peer of a stage's job, as wait_for_count watches a JobThread."""

    def __init__(self, job: str, run: str):
        stage = {spark_job: stage for stage, spark_job in streams_peer.PEERS.items()}[job]
        self.job = streams_peer.user(stage)
        self.process = streams_peer.PeerProcess(stage, run, ROOT / ".run" / "logs" / f"bench-{self.job}.log",
                                                *PEER_SETTINGS)

    def start(self) -> None:
        self.process.wait_running()

    def is_alive(self) -> bool:
        return self.process.alive()

    @property
    def error(self) -> str:
        return self.process.tail(10)

    @property
    def pid(self) -> int:
        return self.process.proc.pid

    def stop(self) -> None:
        self.process.stop()


# The pipeline up to its windows, in Spark micro-batches (the aggregate keeps windows in
# state: no real-time mode) and as the three Kafka Streams peers: CPU per record, and how
# long after the last reading is sent its window counts it. Not a latency per record:
# the aggregated topic holds window versions.
PIPELINE = Stage("clean -> enrich -> aggregate", ("pipeline-clean", "pipeline-enrich", "pipeline-aggregate"),
                 "weather.readings.aggregated")
PIPELINE_MODES = ("micro-batch", STREAMS)


class TopicWatcher(threading.Thread):
    """Reads the output topic from `starting`; latency of each record of the run."""

    def __init__(self, topic: str, starting: dict[int, int], run: str):
        super().__init__(daemon=True)
        self.topic, self.starting, self.run_id = topic, starting, run
        self.arrivals: list[tuple[int, float]] = []  # (seq, latency ms)
        self.stop = threading.Event()

    def run(self) -> None:
        # The default fetch.wait.max.ms (500): the broker answers a waiting fetch as soon as
        # a record arrives, so a shorter wait adds nothing but empty fetches (5 ms: 200/s).
        consumer = kafka.consumer(f"bench-stage-{self.run_id}")
        consumer.assign([TopicPartition(self.topic, p, o) for p, o in self.starting.items()])
        try:
            while not self.stop.is_set():
                # Stamped as they are handed over: consume(500, 0.05) waited out its 50 ms
                # unless 500 records came first, so at 1,000 records/s every record was
                # stamped up to 50 ms late.
                msgs = kafka.consume_ready(consumer, 500, 0.05)
                now = time.time() * 1000
                for msg in msgs:
                    if msg.error() or msg.value() is None:
                        continue
                    try:
                        value = json.loads(msg.value())
                    except ValueError:
                        continue
                    if isinstance(value, dict) and value.get("run") == self.run_id:
                        self.take(value, now)
        finally:
            consumer.close()

    def take(self, value: dict, now_ms: float) -> None:
        self.arrivals.append((int(value["seq"]), now_ms - float(value["ts"])))

    def count(self) -> int:
        return len(self.arrivals)


class WindowWatcher(TopicWatcher):
    """Reads the aggregated topic: the run's window versions, the highest count per window
    kept (as the sink keeps it); count() is their sum."""

    def __init__(self, topic: str, starting: dict[int, int], run: str):
        super().__init__(topic, starting, run)
        self.windows: dict[tuple, int] = {}

    def take(self, value: dict, now_ms: float) -> None:
        k = (value.get("station"), value.get("window_start"))
        self.windows[k] = max(self.windows.get(k, 0), int(value["n"]))

    def count(self) -> int:
        return sum(self.windows.values())


def runners_of(stage: Stage, mode: str, run: str, starting: dict) -> list:
    """The stage's jobs as JobThreads in a Spark mode, or their Kafka Streams peers (each
    from the end of its input: --from-end)."""
    if mode == STREAMS:
        return [Peer(job, run) for job in stage.jobs]
    first = {job: catalogue.job(job).inputs[0] for job in stage.jobs}
    return [JobThread(job, job_runs.job_args(job, run, {first[job]: starting[first[job]]}, "--trigger-seconds",
                                             TRIGGER_SECONDS, "--mode", mode, bounded=False))
            for job in stage.jobs]


NOTES = {"micro-batch": f"trigger {TRIGGER_SECONDS} s", "real-time": "real-time mode",
         STREAMS: "Kafka Streams, record at a time"}


@dataclass
class Running:
    """A stage's jobs (or peers) running, the watcher on its output and the feeder."""
    stage: Stage
    mode: str
    run: str
    runners: list
    watcher: TopicWatcher
    producer: object
    topic: str  # the topic fed

    def wait_for(self, total: int, timeout: float, what: str) -> None:
        wait_for_count(self.watcher.count, total, self.runners, timeout, 0.05,
                       f"{self.stage.name} ({self.mode}): {what}")

    def pids(self):
        """The processes whose CPU is the stage's: the peers' JVMs, or the Spark driver."""
        return [r.pid for r in self.runners] if self.mode == STREAMS else spark_driver_pid()

    def feed(self, seq0: int, count: int, rate: float | None, sent: list[float] | None = None) -> None:
        feed(self.producer, self.topic, self.run, seq0, count, rate, self.stage.temperature, sent=sent)


@contextmanager
def started(stage: Stage, mode: str, watcher_class: type[TopicWatcher] = TopicWatcher) -> Iterator[Running]:
    """The stage running in `mode` from the end of its input, warmed up (WARMUP readings
    through it); stopped, with its checkpoints removed, on leaving."""
    run = "bench" + job_runs.new_run()
    starting = {**input_ends(stage.jobs), **job_runs.end_offsets([stage.output])}
    running = Running(stage, mode, run, runners_of(stage, mode, run, starting),
                      watcher_class(stage.output, starting[stage.output], run), feed_producer(),
                      catalogue.job(stage.jobs[0]).inputs[0])
    running.watcher.start()
    try:
        for r in running.runners:
            r.start()
        running.feed(0, WARMUP, None)
        running.wait_for(WARMUP, 180, "warm-up readings")
        yield running
    finally:
        running.watcher.stop.set()
        for r in running.runners:
            r.stop()
        running.watcher.join(10)
        shutil.rmtree(job_runs.checkpoint(stage.jobs[0], run).parent, ignore_errors=True)


def paced(running: Running, rate: int, seconds: int) -> tuple[int, ceiling.CpuUse, float]:
    """Feeds PACED_WARMUP_SECONDS + seconds at `rate` and waits until every reading is
    through: (readings fed, the stage's CPU while they were, seconds from the last sent
    to the last through)."""
    n = rate * (PACED_WARMUP_SECONDS + seconds)
    progress(f"{running.stage.name} ({running.mode}): feeding {n:,} readings at {rate:,}/s for "
             f"{PACED_WARMUP_SECONDS} + {seconds} s (the first {PACED_WARMUP_SECONDS} s not measured)")
    with ceiling.CpuUse(running.pids()) as cpu:
        running.feed(WARMUP, n, rate)
        fed = time.monotonic()
        running.wait_for(WARMUP + n, 180, "every reading")
        drained = time.monotonic() - fed
    return n, cpu, drained


def per_records(cpu: ceiling.CpuUse, n: int) -> float | None:
    return None if cpu.seconds is None else cpu.seconds / n * PER_RECORDS


def measure(stage: Stage, mode: str, rate: int, seconds: int) -> dict:
    """A stateless stage's latency per record (event time -> read from its output) and CPU."""
    with started(stage, mode) as running:
        n, cpu, drained = paced(running, rate, seconds)
        first_measured = WARMUP + rate * PACED_WARMUP_SECONDS
        latencies = [ms for seq, ms in running.watcher.arrivals if seq >= first_measured]
        batches = batch_breakdowns() if mode != STREAMS else {}
        jobs = [r.job for r in running.runners]
    p50, p99 = stats.percentile(latencies, 50), stats.percentile(latencies, 99)
    cpu_per = per_records(cpu, n)
    progress(f"{stage.name} ({mode}): p50 {stats.fmt(p50, 1)} ms, p99 {stats.fmt(p99, 1)} ms over "
             f"{len(latencies):,} records, {stats.fmt(cpu_per, 2)} CPU s per {PER_RECORDS:,}")
    return {"stage": stage.name, "mode": mode, "jobs": jobs, "input_rate": rate, "fed_seconds": seconds,
            "records": len(latencies), "latency_p50_ms": p50, "latency_p99_ms": p99,
            "latency_max_ms": max(latencies, default=None), "batches": batches, "cpu_seconds_per_1e5": cpu_per,
            "cpu_busy": cpu.fraction, "drain_seconds": drained,
            "note": f"{NOTES[mode]}; first {PACED_WARMUP_SECONDS} s not measured"}


def measure_windows(mode: str, rate: int, seconds: int) -> dict:
    """The pipeline up to its windows: CPU per record, and how long after the last reading
    is sent the windows count every reading (no latency per record: the aggregated topic
    holds window versions)."""
    with started(PIPELINE, mode, WindowWatcher) as running:
        n, cpu, drained = paced(running, rate, seconds)
        jobs = [r.job for r in running.runners]
        batches = batch_breakdowns() if mode != STREAMS else {}
    cpu_per = per_records(cpu, n)
    progress(f"{PIPELINE.name} ({mode}): every reading counted {drained:.1f} s after the last was sent, "
             f"{stats.fmt(cpu_per, 2)} CPU s per {PER_RECORDS:,}")
    return {"stage": PIPELINE.name, "mode": mode, "jobs": jobs, "input_rate": rate, "fed_seconds": seconds,
            "records": n, "latency_p50_ms": None, "latency_p99_ms": None, "latency_max_ms": None,
            "batches": batches, "cpu_seconds_per_1e5": cpu_per, "cpu_busy": cpu.fraction, "drain_seconds": drained,
            "note": f"{NOTES[mode]}; first {PACED_WARMUP_SECONDS} s not measured"}


def run_all(rate: int, seconds: int) -> list[dict]:
    """Every stage in every mode, then the pipeline up to its windows."""
    measurements = [*((stage.name, mode, lambda st=stage, m=mode: measure(st, m, rate, seconds))
                      for stage in STAGES for mode in MODES),
                    *((PIPELINE.name, mode, lambda m=mode: measure_windows(m, rate, seconds))
                      for mode in PIPELINE_MODES)]
    out = []
    for stage, mode, measure_one in measurements:
        try:
            out.append(measure_one())
        except Exception as e:  # one stage failing must not lose the other figures
            progress(f"{stage} ({mode}): failed: {e}")
            out.append({"stage": stage, "mode": mode, "failed": f"{e}"[:300]})
    return out

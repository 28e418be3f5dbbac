"""Part 3: Spark jobs end to end. The jobs run continuously (their main(), like
runner.run_job but unbounded, in this process, on the Spark session the
consume measurements already warmed) from the end of their input topics with fresh
checkpoints. Readings stamped with the wall clock as event time are fed at a fixed
rate while the sink's count of the run's records is polled: the k-th record counts as
arrived when the sink first holds k of them, and its latency is that moment minus its
event time. Once they are all in the sink, a burst is produced as fast as possible; the time until the sink
holds all of it gives the records/s reaching the sink.

- pipes and filters: the four pipeline stages at once (clean -> enrich -> aggregate ->
  sink); records in the sink = sum of the window counts (station_aggregates.n).
- exactly-once: the exactly-once job; records in the sink = its rows.
A target whose job modules do not exist is reported "not available"."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import threading
import time
from dataclasses import dataclass

from bench import ceiling, stats
from bench.runner import progress
from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue, credentials
from kafka_patterns.jobs import base
from kafka_patterns.runtime.readings import Reading, station_of
from pattern_harness import job_runs

TRIGGER_SECONDS = "0.5"
WARMUP = 20
# The first seconds of the fixed rate are fed but not measured, as a benchmark's warm-up:
# the jobs step from idle to the rate, and their JIT compiles the new load's code
# (exactly-once in a new driver: the first 2-6 s of readings at 1.6-3.6 s, the rest at
# most 1.0-1.5 s). A steady stream has no such step.
PACED_WARMUP_SECONDS = 10
POLL_SECONDS = 0.2
# How long the feed's producer waits to fill a batch for the pipelines (a reading's
# latency counts from before it: its event time is when it was handed to the producer).
# At 5 ms, librdkafka's and Kafka 4's default, the 1,000 readings a second went out in
# about 175 Produce requests a second, each waking two follower fetches, all over TLS:
# the three brokers took 1.27 of the 2 cores and left the pipeline's Spark driver 0.49
# (make bench, bench/README.md). A one-hop stage keeps 5 ms, its latency being tens of ms.
PIPELINE_FEED_LINGER_MS = 50


@dataclass(frozen=True)
class Target:
    name: str
    jobs: tuple[str, ...]  # the first job reads the topic the readings are fed to
    count: str  # SQL expression: the records a sink table's rows stand for
    real_time: tuple[str, ...] = ()  # the jobs run in Spark's real-time mode (the others in micro-batches)

    @property
    def table(self) -> str:
        return catalogue.job(self.jobs[-1]).table

    @property
    def count_sql(self) -> str:
        return f"SELECT {self.count} FROM {self.table} WHERE run = %s"


TARGETS = (
    Target("pipes-and-filters", ("pipeline-clean", "pipeline-enrich", "pipeline-aggregate", "pipeline-sink"),
           "coalesce(sum(n), 0)"),  # one row per station window, n readings each
    Target("pipes-and-filters, clean and enrich in real-time mode",
           ("pipeline-clean", "pipeline-enrich", "pipeline-aggregate", "pipeline-sink"), "coalesce(sum(n), 0)",
           real_time=("pipeline-clean", "pipeline-enrich")),
    Target("exactly-once", ("exactly-once",), "count(*)"),
)


def unavailable(target: Target) -> str | None:
    """None when the target can be measured, else why not."""
    for job in target.jobs:
        spec = catalogue.jobs().get(job)
        if spec is None:
            return f"no catalogue job {job!r}"
        if importlib.util.find_spec(spec["module"]) is None:
            return f"{spec['module']} does not exist yet"
    return None


def ensure_sink(target: Target) -> None:
    """The sink table exists before it is polled (the job would create it on start)."""
    from kafka_patterns.jobs import pipeline, readings_to_postgres

    if catalogue.job(target.jobs[-1]).module == pipeline.__name__:
        postgres.ensure(pipeline.DDL, table=target.table)
    else:
        readings_to_postgres.ensure_table(target.table)


def input_ends(jobs: tuple[str, ...]) -> dict[str, dict[int, int]]:
    """The end offsets of each job's first input, looked up as that job (the bench's own
    user may not describe a stage's input topic)."""
    ends = {}
    for job in jobs:
        topic = catalogue.job(job).inputs[0]
        with credentials.as_user(job):
            ends.update(job_runs.end_offsets([topic]))
    return ends


class JobThread(threading.Thread):
    """A catalogue job's main() running continuously in this process; stop() stops its
    streaming queries (a separate process would spend most of a QUICK run starting a JVM)."""

    def __init__(self, job: str, args: list[str]):
        super().__init__(daemon=True)
        self.job, self.args, self.error = job, args, None

    def run(self) -> None:
        try:
            # A thread starts without the caller's context: the job's identity is set here.
            with credentials.as_user(self.job):
                importlib.import_module(catalogue.job(self.job).module).main(["--job", self.job, *self.args])
        except Exception as e:
            self.error = e

    def stop(self) -> None:
        from kafka_patterns.runtime import spark

        base.stop_queries([q for q in spark.session("bench").streams.active
                           if q.name and q.name.startswith(f"{self.job}-")], between_batches_within=15)
        self.join(timeout=60)


def wait_for_count(count, total: int, threads: list[JobThread], timeout: float, interval: float, what: str) -> None:
    """Wait until count() reaches total; a job that stopped meanwhile raises its error."""
    kafka.wait_until(lambda: count() >= total or not all(t.is_alive() for t in threads), timeout, interval, what)
    dead = [t for t in threads if not t.is_alive()]
    if dead:
        raise RuntimeError(f"{dead[0].job} stopped: {dead[0].error}")


def spark_driver_pid() -> int | None:
    """The pid of this process's Spark driver JVM, which runs every JobThread's queries
    (None when it is not a child this process launched)."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    return getattr(proc, "pid", None)


def batch_breakdowns() -> dict[str, dict]:
    """Where each running query's micro-batches spend their time (stats.batch_breakdown),
    by query name: read while the jobs still run, from the Spark session they share
    with this process."""
    from kafka_patterns.runtime import spark

    return {q.name: stats.batch_breakdown(q.recentProgress) for q in spark.session("bench").streams.active}


class SinkWatcher(threading.Thread):
    """Polls the run's record count in the sink: timeline of (wall ms, count)."""

    def __init__(self, count_sql: str, run: str):
        super().__init__(daemon=True)
        self.sql, self.run_id = count_sql, run
        self.timeline: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with postgres.connect(autocommit=True) as conn:
            while not self.stop.is_set():
                n = int(conn.execute(self.sql, (self.run_id,)).fetchone()[0])
                self.timeline.append((time.time() * 1000, n))
                self.stop.wait(POLL_SECONDS)

    def count(self) -> int:
        return self.timeline[-1][1] if self.timeline else 0


def feed_producer(linger_ms: int = 5):
    """The producer of a measurement's readings, one for all its feeds: the warm-up's
    readings connect it (TLS, SCRAM, its idempotent producer id), so the measured ones
    do not wait for that; a new producer per feed put its start-up in the first readings'
    latency (exactly-once: the first second's at 1.5-1.9 s, the rest at most 1.1 s).
    It lingers `linger_ms`, by default 5 ms as librdkafka's and Kafka 4's producers do:
    with linger.ms 0 each paced reading was a Produce request of its own and, acks=all,
    two follower fetches, TLS every one (see bench/README.md)."""
    return kafka.producer(**{"linger.ms": linger_ms})


def feed(producer, topic: str, run: str, seq0: int, count: int, rate: float | None,
         temperature: float = 20.0, sent: list[float] | None = None) -> list[float]:
    """Readings with event time = send time (20 sensors, 4 stations), paced at `rate`
    (None: as fast as possible), all acknowledged; returns their event times (ms), also
    appended to `sent` as they go (another thread can count the readings sent so far)."""
    sent = [] if sent is None else sent
    t0 = time.monotonic()
    for i in range(count):
        if rate:
            ahead = i / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)  # pacing to the fixed input rate
        n = (seq0 + i) % 20
        ts = int(time.time() * 1000)
        r = Reading(run, f"sensor-{n:02d}", station_of(n, 4), seq0 + i, temperature, 50.0, ts)
        while True:
            try:
                producer.produce(topic, key=r.sensor, value=r.to_json())
                break
            except BufferError:
                producer.poll(0.01)
        sent.append(ts)
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError(f"readings to {topic} not acknowledged within 60 s")
    return sent


def measure(target: Target, rate: int, seconds: int, burst: int) -> dict:
    run = "bench" + job_runs.new_run()
    ensure_sink(target)
    first = {job: catalogue.job(job).inputs[0] for job in target.jobs}
    starting = input_ends(target.jobs)
    threads = [JobThread(job, job_runs.job_args(job, run, {first[job]: starting[first[job]]},
                                            "--trigger-seconds", TRIGGER_SECONDS,
                                            *(["--mode", "real-time"] if job in target.real_time else []),
                                            bounded=False))
               for job in target.jobs]
    watcher = SinkWatcher(target.count_sql, run)
    topic = first[target.jobs[0]]
    producer = feed_producer(PIPELINE_FEED_LINGER_MS)

    def wait_for(total: int, timeout: float, what: str) -> None:
        wait_for_count(watcher.count, total, threads, timeout, POLL_SECONDS, f"{target.name}: {what}")

    for t in threads:
        t.start()
    watcher.start()
    try:
        progress(f"{target.name}: {len(threads)} job(s) started (trigger {TRIGGER_SECONDS} s); "
                 f"waiting for {WARMUP} warm-up readings in the sink")
        feed(producer, topic, run, 0, WARMUP, None)
        wait_for(WARMUP, 180, "warm-up readings in the sink")
        paced, n = rate * PACED_WARMUP_SECONDS, rate * (PACED_WARMUP_SECONDS + seconds)
        progress(f"{target.name}: feeding {n:,} readings at {rate:,}/s for {PACED_WARMUP_SECONDS} + {seconds} s "
                 f"(the first {PACED_WARMUP_SECONDS} s not measured)")
        with ceiling.CpuUse(spark_driver_pid()) as cpu:
            sent = feed(producer, topic, run, WARMUP, n, rate)
        # The burst waits until the fixed-rate readings are in the sink: sent right after
        # them, it joined the micro-batch holding the last of them, whose latency then
        # counted the burst's drain (exactly-once: the last half second of readings at
        # 1.6-2.7 s, the rest at most 0.9-1.2 s).
        wait_for(WARMUP + n, 300, "the fixed-rate readings in the sink")
        progress(f"{target.name}: burst of {burst:,} readings as fast as possible")
        t0 = time.monotonic()
        feed(producer, topic, run, WARMUP + n, burst, None)
        wait_for(WARMUP + n + burst, 300, "every reading in the sink")
        drain = time.monotonic() - t0
        timeline = list(watcher.timeline)
        latencies = stats.arrival_latencies(sent, WARMUP, timeline)[paced:]
        flowing = stats.flow_rate(timeline, WARMUP + n, WARMUP + n + burst)
        batches = batch_breakdowns()
    finally:
        watcher.stop.set()
        for t in threads:
            t.stop()
        shutil.rmtree(job_runs.checkpoint(target.jobs[0], run).parent, ignore_errors=True)
        with postgres.connect(autocommit=True) as conn:  # the bench's rows are not the patterns' data
            conn.execute(f"DELETE FROM {target.table} WHERE run = %s", (run,))
    progress(f"{target.name}: e2e p50 {stats.fmt(stats.percentile(latencies, 50))} ms, "
             f"p99 {stats.fmt(stats.percentile(latencies, 99))} ms")
    return {"job": target.name, "jobs": list(target.jobs), "available": True, "input_rate": rate,
            "fed_seconds": seconds, "latency_p50_ms": stats.percentile(latencies, 50),
            "latency_p99_ms": stats.percentile(latencies, 99), "burst_records": burst,
            "sink_records_per_s": stats.rate(burst, drain), "flowing_records_per_s": flowing, "batches": batches,
            "cpu_busy": cpu.fraction, "spark_cores": cpu.cores,
            "note": f"burst of {burst:,}; trigger {TRIGGER_SECONDS} s; feed lingers {PIPELINE_FEED_LINGER_MS} ms; "
                    f"first {PACED_WARMUP_SECONDS} s not measured"
                    + (f"; real-time mode: {', '.join(target.real_time)}" if target.real_time else "")}


def run_all(rate: int, seconds: int, burst: int, raw_consume: float | None) -> list[dict]:
    out = []
    for target in TARGETS:
        reason = unavailable(target)
        if reason:
            progress(f"{target.name}: not available ({reason})")
            out.append({"job": target.name, "available": False, "reason": reason})
            continue
        try:
            out.append({**measure(target, rate, seconds, burst), "raw_consume_records_per_s": raw_consume})
        except Exception as e:  # one target failing must not lose the other figures
            progress(f"{target.name}: failed: {e}")
            out.append({"job": target.name, "available": False, "reason": f"failed: {e}"[:300]})
    return out

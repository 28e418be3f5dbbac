"""Part 3: Spark jobs end to end. A job runs as its own process (scenarios.base.spawn_job)
from the end of its input topic with a fresh checkpoint; readings stamped with the
wall clock as event time are fed at a fixed rate, and each sink row's arrival is seen
by polling the sink table (id > last seen): latency = arrival - event time. Then a
burst is produced as fast as possible and the time until the sink holds all of it
gives the sustained records/s reaching the sink.

Only jobs whose module exists are measured; the others are reported "not available".
The pipes-and-filters job (kafka_patterns.jobs.pipeline) writes windowed aggregates, not
one row per record, so it has no per-record sink latency: it is reported as not
available until a per-record measurement exists for it."""

from __future__ import annotations

import importlib.util
import shutil
import threading
import time

from bench import stats
from bench.runner import progress
from kafka_patterns import catalogue, clients, pg
from kafka_patterns.readings import Reading, station_of
from kafka_patterns.scenarios import base

TRIGGER_SECONDS = "0.5"
WARMUP = 20


def available(job: str) -> str | None:
    """None when the job can be measured, else why not."""
    spec = catalogue.jobs().get(job)
    if spec is None:
        return f"no catalogue job {job!r}"
    if importlib.util.find_spec(spec["module"]) is None:
        return f"{spec['module']} does not exist yet"
    return None


class SinkWatcher(threading.Thread):
    """Polls the sink table for the run's new rows; records (seq, event ms, arrival ms)."""

    def __init__(self, table: str, run: str, interval: float = 0.2):
        super().__init__(daemon=True)
        self.table, self.run_id, self.interval = table, run, interval
        self.rows: list[tuple[int, float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        last = 0
        sql = (f"SELECT id, seq, extract(epoch FROM event_time) * 1000 FROM {self.table} "
               "WHERE run = %s AND id > %s ORDER BY id")
        with pg.connect(autocommit=True) as conn:
            while not self.stop.is_set():
                new = conn.execute(sql, (self.run_id, last)).fetchall()
                now = time.time() * 1000
                for row_id, seq, event_ms in new:
                    self.rows.append((seq, float(event_ms), now))
                    last = max(last, row_id)
                self.stop.wait(self.interval)

    def count_from(self, seq: int) -> int:
        return sum(1 for s, _, _ in list(self.rows) if s >= seq)


def feed(topic: str, run: str, seq0: int, count: int, rate: float | None) -> float:
    """Readings with event time = send time; paced at `rate` (None: as fast as possible).
    Returns the seconds it took to have them all acknowledged."""
    producer = clients.producer()
    t0 = time.monotonic()
    for i in range(count):
        if rate:
            ahead = i / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)  # pacing to the fixed input rate
        n = (seq0 + i) % 20
        r = Reading(run, f"sensor-{n:02d}", station_of(n, 4), seq0 + i, 20.0, 50.0, int(time.time() * 1000))
        while True:
            try:
                producer.produce(topic, key=r.sensor, value=r.to_json())
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError(f"readings to {topic} not acknowledged within 60 s")
    return time.monotonic() - t0


def measure_job(job: str, rate: int, seconds: int, burst: int) -> dict:
    from kafka_patterns.jobs import one_to_one

    topic, table = base.input_topics(job)[0], base.output_table(job)
    one_to_one.ensure_table(table)
    run = "bench" + base.new_run()
    starting = base.end_offsets([topic])
    log = base.checkpoint(job, run).parent / f"{job}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    proc = base.spawn_job(job, base.job_args(job, run, starting, "--trigger-seconds", TRIGGER_SECONDS,
                                             bounded=False), log)
    watcher = SinkWatcher(table, run)
    watcher.start()
    try:
        progress(f"{job}: started (trigger {TRIGGER_SECONDS} s); waiting for {WARMUP} warm-up readings in {table}")
        feed(topic, run, 0, WARMUP, None)
        clients.wait_until(lambda: watcher.count_from(0) >= WARMUP or proc.poll() is not None, 180, 0.5,
                           f"{job} to write its warm-up rows (log: {log})")
        if proc.poll() is not None:
            raise RuntimeError(f"{job} exited {proc.returncode}; its log: {log}")
        n = rate * seconds
        progress(f"{job}: feeding {n:,} readings at {rate:,}/s for {seconds} s")
        feed(topic, run, WARMUP, n, rate)
        clients.wait_until(lambda: watcher.count_from(WARMUP) >= n, 120, 0.5, f"{job} to write {n} rows")
        steady = [(s, e, a) for s, e, a in list(watcher.rows) if WARMUP <= s < WARMUP + n]
        latencies = [a - e for _, e, a in steady]
        span = (max(a for _, _, a in steady) - min(e for _, e, _ in steady)) / 1000
        progress(f"{job}: burst of {burst:,} readings as fast as possible")
        seq0 = WARMUP + n
        t0 = time.monotonic()
        feed(topic, run, seq0, burst, None)
        clients.wait_until(lambda: watcher.count_from(seq0) >= burst, 300, 0.2, f"{job} to write the burst")
        drain = time.monotonic() - t0
    finally:
        watcher.stop.set()
        base.hard_kill(proc)
        shutil.rmtree(base.checkpoint(job, run).parent, ignore_errors=True)
    return {"job": job, "available": True, "input_rate": rate, "fed_seconds": seconds,
            "steady_records": len(steady), "steady_sink_records_per_s": stats.rate(len(steady), span),
            "latency_p50_ms": stats.percentile(latencies, 50), "latency_p99_ms": stats.percentile(latencies, 99),
            "burst_records": burst, "sink_records_per_s": stats.rate(burst, drain),
            "note": f"sink rec/s = burst of {burst:,} drained; latency at {rate:,}/s, trigger {TRIGGER_SECONDS} s, "
                    "sink polled every 0.2 s"}


def run_all(rate: int, seconds: int, burst: int, raw_consume: float | None) -> list[dict]:
    out = []
    for job in ("pipeline-sink", "exactly-once"):
        reason = available(job)
        if reason is None and job.startswith("pipeline"):
            reason = "the pipeline sink writes windowed aggregates: no per-record sink measurement yet"
        if reason:
            progress(f"{job}: not available ({reason})")
            out.append({"job": job, "available": False, "reason": reason})
            continue
        try:
            out.append({**measure_job(job, rate, seconds, burst), "raw_consume_records_per_s": raw_consume})
        except Exception as e:
            progress(f"{job}: failed: {e}")
            out.append({"job": job, "available": False, "reason": f"failed: {e}"[:300]})
    return out

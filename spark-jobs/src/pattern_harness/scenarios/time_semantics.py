"""time semantics: the same readings windowed by event time, ingestion time and
processing time. Phase 1 produces on-time readings and runs the job (its watermark
moves to the newest event time - 30 s); phase 2 produces more readings, some of them
late (measured minutes ago), and runs the job again from its checkpoint.

Checked: the event-time window counts equal a Python computation over the on-time
readings; the late ones are dropped by the watermark and counted; the ingestion-time
copy's timestamps are broker-assigned (LogAppendTime: the producer sent each reading
with its event time as the record timestamp, the broker replaced it, so late readings
carry their arrival time); ingestion and processing time count every reading."""

from __future__ import annotations

from collections import Counter

from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import time_semantics as job_module
from kafka_patterns.jobs.time_semantics import WATERMARK_MS, WINDOW_MS
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import Delivery
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


def event_windows(rs: list[readings.Reading]) -> Counter:
    """window start ms -> readings in it, by event time."""
    return Counter(r.ts // WINDOW_MS * WINDOW_MS for r in rs)


def split_late(rs: list[readings.Reading], watermark_ms: int) -> tuple[list, list]:
    """(on time, late): late = its event-time window ended at or before the watermark."""
    on_time = [r for r in rs if r.ts // WINDOW_MS * WINDOW_MS + WINDOW_MS > watermark_ms]
    late = [r for r in rs if r.ts // WINDOW_MS * WINDOW_MS + WINDOW_MS <= watermark_ms]
    return on_time, late


def copy_to_ingest(topic: str, rs: list[readings.Reading]) -> None:
    """The same readings to the LogAppendTime topic, each sent with its event time as
    the record timestamp (which the broker must overwrite)."""
    producer = kafka.producer()
    for r in rs:
        producer.produce(topic, key=r.sensor, value=r.to_json(), timestamp=r.ts)
    if producer.flush(60):
        raise RuntimeError(f"copy to {topic} not acknowledged within 60s")


def gaps(want: Counter, got: Counter) -> tuple[int, int]:
    return (sum(max(0, n - got.get(k, 0)) for k, n in want.items()),
            sum(max(0, n - want.get(k, 0)) for k, n in got.items()))


@base.timed
def run(records: int = 600, late: float = 0.1) -> base.Outcome:
    job = JOBS[0]
    topics = job_module.topic_of(catalogue.job(job))
    source, ingest = topics["event"], topics["ingestion"]
    run_id = base.new_run()
    starting = base.end_offsets([source, ingest])
    first = records * 2 // 3
    base.progress(f"{KEY}: phase 1: {first} on-time readings to {source} and (same readings) {ingest}")
    p1 = generator.produce(source, first, run=run_id)
    copy_to_ingest(ingest, p1.readings)
    base.run_job(job, run_id, starting)
    watermark = max(r.ts for r in p1.readings) - WATERMARK_MS
    base.progress(f"{KEY}: phase 2: {records - first} readings, {late:.0%} of them late, to both topics")
    p2 = generator.produce(source, records - first, run=run_id, late=late, seq_start=first)
    copy_to_ingest(ingest, p2.readings)
    base.run_job(job, run_id, starting)
    dropped = job_module.LATE_DROPPED.get(str(base.checkpoint(job, run_id) / "event"), -1)

    all_readings = p1.readings + p2.readings
    on_time, late_rs = split_late(p2.readings, watermark)
    want_event = event_windows(p1.readings + on_time)
    got: dict[str, Counter] = {s: Counter() for s in job_module.SEMANTICS}
    for semantics, start, n in postgres.query(
            f"SELECT semantics, window_start, n FROM {base.output_table(job)} WHERE run = %s", (run_id,)):
        got[semantics][start] = n
    ev_missing, ev_extra = gaps(want_event, got["event"])
    total = len(all_readings)
    others = {s: sum(got[s].values()) for s in ("ingestion", "processing")}
    lost = ev_missing + sum(max(0, total - n) for n in others.values())
    dup = ev_extra + sum(max(0, n - total) for n in others.values())
    delivery = Delivery(acked=sum(want_event.values()) + 2 * total,
                        received=sum(got["event"].values()) + sum(others.values()), lost=lost, duplicated=dup,
                        reordered=0)

    ingested = [m for m in base.read_records({ingest: starting[ingest]})
                if (r := readings.parse(m.value())[0]) is not None and r.run == run_id]
    event_ts = {r.record_id: r.ts for r in all_readings}
    by_id = {(r.sensor, r.seq): m.timestamp() for m in ingested if (r := readings.parse(m.value())[0])}
    late_ids = {r.record_id for r in late_rs}
    checks = {
        "event-time windows = Python over the on-time readings": ev_missing == 0 and ev_extra == 0,
        "late readings produced (the watermark had something to drop)": len(late_rs) > 0,
        # The readings the event-time windows left out are exactly the late ones.
        "late readings dropped and counted": total - sum(got["event"].values()) == len(late_rs),
        "Spark reported drops by the watermark": dropped > 0,
        "ingestion timestamps are broker-assigned (LogAppendTime)": len(ingested) == total and all(
            t[0] == TIMESTAMP_LOG_APPEND_TIME for t in by_id.values()),
        "late readings' ingestion time differs from their event time": all(
            by_id[i][1] - event_ts[i] >= WATERMARK_MS for i in late_ids if i in by_id) and late_ids <= by_id.keys(),
        "ingestion time counts every reading": others["ingestion"] == total,
        "processing time counts every reading": others["processing"] == total,
    }
    span = {s: (f"{len(c)} windows" + (f", {(max(c) - min(c)) / 1000:.0f}s apart at most" if c else ""))
            for s, c in got.items()}
    behind = [(r_ts_now - r.ts) / 1000 for r in late_rs for r_ts_now in [max(x.ts for x in p2.readings)]]
    notes = [f"{len(late_rs)} late readings ({min(behind, default=0):.0f}-{max(behind, default=0):.0f}s behind the "
             f"newest event), left out of the event-time windows: {total - sum(got['event'].values())}; Spark's "
             f"numRowsDroppedByWatermark: {dropped} (rows entering the state operator, i.e. partial aggregates "
             "per window and partition, so it can be lower than the events)",
             *[f"{s}: {sum(c.values())} readings in {span[s]}" for s, c in got.items()],
             "same input, different windows: event time files a late reading under when it was measured (and "
             "drops it once that window closed); ingestion and processing time file it under its arrival"]
    return base.Outcome(KEY, JOBS, delivery, base.promise(job), records_in=total,
                        records_out=sum(got["event"].values()) + sum(others.values()), checks=checks, notes=notes)

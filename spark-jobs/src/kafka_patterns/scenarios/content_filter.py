"""content-based filtering: each alert topic holds exactly the run's readings that
match its predicate (none missing, none wrongly routed); the Kafka sink is
at-least-once, so duplicates are counted, not failed.

Also the shared reader of the Kafka-to-Kafka scenarios: `read_records` reads an
offset range of topics back with a plain consumer (an independent check)."""

from __future__ import annotations

from collections import defaultdict

from confluent_kafka import TopicPartition

from kafka_patterns import clients, generator, readings
from kafka_patterns.delivery import Delivery, account
from kafka_patterns.jobs.content_filter import PREDICATES_PY
from kafka_patterns.scenarios import base

KEY = "content-filter"
ORDER = 70
JOBS = ["content-filter"]


def read_records(start: dict[str, dict[int, int]], end: dict[str, dict[int, int]] | None = None,
                 timeout: float = 60) -> list:
    """Every message of the topics in [start, end) per partition (end: the current end
    offsets), in partition order; assign() without a group commit, so it disturbs nobody."""
    end = end or base.end_offsets(list(start))
    consumer = clients.consumer(f"verify-{base.new_run()}")
    wanted = [(t, p) for t, ps in start.items() for p, o in ps.items() if o < end[t][p]]
    consumer.assign([TopicPartition(t, p, start[t][p]) for t, p in wanted])
    pos = {(t, p): start[t][p] for t, p in wanted}
    out = []

    def done() -> bool:
        for m in consumer.consume(1000, timeout=0.5):
            if m.error() or m.offset() >= end[m.topic()][m.partition()]:
                continue
            pos[(m.topic(), m.partition())] = m.offset() + 1
            out.append(m)
        return all(pos[tp] >= end[tp[0]][tp[1]] for tp in wanted)

    try:
        if wanted:
            clients.wait_until(done, timeout, interval=0, what=f"topics read back to {end}")
    finally:
        consumer.close()
    return out


def received_ids(messages: list, run: str) -> dict[str, list[tuple[str, int]]]:
    """topic -> (sensor, seq) of the run's readings in it, in offset order per partition."""
    out: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for m in messages:
        r, _ = readings.parse(m.value())
        if r is not None and r.run == run:
            out[m.topic()].append(r.record_id)
    return out


def expected_routes(produced: list[readings.Reading]) -> dict[str, set[tuple[str, int]]]:
    """topic -> the record ids whose temperature matches the topic's predicate."""
    return {topic: {r.record_id for r in produced if pred(r.temperature)} for topic, pred in PREDICATES_PY.items()}


def combine(parts: list[Delivery]) -> Delivery:
    return Delivery(*(sum(getattr(d, f) for d in parts) for f in
                      ("acked", "received", "lost", "duplicated", "reordered", "unacked")))


@base.timed
def run(records: int = 3_000) -> base.Outcome:
    job = JOBS[0]
    topic, outputs = base.input_topics(job)[0], base.output_topics(job)
    alert_topics = list(PREDICATES_PY)
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    out_start = base.end_offsets(outputs)
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id, seed=7)
    base.progress(f"{KEY}: running job {job} (Spark, available-now) -> {', '.join(outputs)}")
    base.run_job(job, run_id, starting)
    got = received_ids(read_records({t: out_start[t] for t in alert_topics}), run_id)
    want = expected_routes(produced.readings)
    by_topic = {t: account(want[t], got.get(t, []), order="per-key") for t in alert_topics}
    d = combine(list(by_topic.values()))
    checks, notes = {}, []
    for t in alert_topics:
        wrong = set(got.get(t, [])) - want[t]
        checks[f"{t}: every matching reading, none wrongly routed"] = by_topic[t].lost == 0 and not wrong
        notes.append(f"{t}: {len(want[t])} expected, {len(got.get(t, []))} received, {len(wrong)} wrongly routed, "
                     f"{by_topic[t].duplicated} duplicates")
    checks["some readings match no predicate (filter, not copy)"] = sum(map(len, want.values())) < len(produced.acked)
    return base.Outcome(KEY, JOBS, d, base.promise(job), records_in=len(produced.acked),
                        records_out=sum(map(len, got.values())), checks=checks, notes=notes)

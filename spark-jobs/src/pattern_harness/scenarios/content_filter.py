"""content-based filtering: each alert topic holds exactly the run's readings that
match its predicate (none missing, none wrongly routed); the Kafka sink is
at-least-once, so duplicates are counted, not failed."""

from __future__ import annotations

from collections import defaultdict

from kafka_patterns.config import catalogue
from kafka_patterns.jobs.content_filter import PREDICATES_PY
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import account, combine
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


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
    got = received_ids(base.read_records({t: out_start[t] for t in alert_topics}), run_id)
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

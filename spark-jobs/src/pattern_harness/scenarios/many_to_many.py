"""many-to-many: two station producers write concurrently to their own topics; three
consumer groups read both topics independently: the many-to-many Spark job
(merged_readings) and two confluent-kafka consumer groups (`audit`, `archive`), all
at the same time. Each group must see every record of every producer.

Records are identified per producer: key = "<topic>/<sensor>", so per-key order is
checked within what one producer wrote for one sensor. The reported delivery sums
the three groups (acked = records x groups)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import Delivery, account, combine
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
CLIENT_GROUPS = ("audit", "archive")
SEQ_STRIDE = 1_000_000  # producer i numbers its records from i * SEQ_STRIDE


def record_key(topic: str, sensor: str) -> str:
    return f"{topic}/{sensor}"


def group_read(group: str, start: dict[str, dict[int, int]], end: dict[str, dict[int, int]], run: str,
               timeout: float = 60) -> list[tuple[str, int]]:
    """A consumer-group member subscribed to every topic of `start`: positions itself at
    the run's start offsets when partitions are assigned, reads to `end`, commits, and
    returns the run's record ids (per-producer key) in arrival order."""
    consumer = kafka.consumer(group)

    def on_assign(c, partitions):
        for tp in partitions:
            tp.offset = start[tp.topic][tp.partition]
        c.assign(partitions)

    consumer.subscribe(list(start), on_assign=on_assign)
    pos = {(t, p): o for t, ps in start.items() for p, o in ps.items()}
    out: list[tuple[str, int]] = []

    def done() -> bool:
        for m in consumer.consume(1000, timeout=0.5):
            if m.error():
                continue
            pos[(m.topic(), m.partition())] = m.offset() + 1
            r, _ = readings.parse(m.value())
            if r is not None and r.run == run and m.offset() < end[m.topic()][m.partition()]:
                out.append((record_key(m.topic(), r.sensor), r.seq))
        return all(pos[(t, p)] >= o for t, ps in end.items() for p, o in ps.items())

    try:
        kafka.wait_until(done, timeout, interval=0, what=f"group {group} to read {list(start)} to the end")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return out


@base.timed
def run(records: int = 1_000) -> base.Outcome:
    job = JOBS[0]
    topics = base.input_topics(job)
    run_id = base.new_run()
    starting = base.end_offsets(topics)
    base.progress(f"{KEY}: {len(topics)} producers writing {records} readings each, concurrently, to "
                  + ", ".join(topics))
    with ThreadPoolExecutor(len(topics)) as pool:
        produced = list(pool.map(lambda it: generator.produce(it[1], records, run=run_id, seq_start=it[0] * SEQ_STRIDE),
                                 enumerate(topics)))
    acked = [(record_key(p.topic, s), seq) for p in produced for s, seq in p.acked]
    ending = base.end_offsets(topics)
    base.progress(f"{KEY}: groups {job} (Spark) and {', '.join(CLIENT_GROUPS)} (confluent-kafka) reading concurrently")
    with ThreadPoolExecutor(1 + len(CLIENT_GROUPS)) as pool:
        spark_run = pool.submit(base.run_job, job, run_id, starting)
        clients_read = {g: pool.submit(group_read, f"many-to-many-{g}-{run_id}", starting, ending, run_id)
                        for g in CLIENT_GROUPS}
        spark_run.result()
        seen = {g: f.result() for g, f in clients_read.items()}
    seen[job] = [(record_key(t, s), seq) for t, s, seq in postgres.query(
        f"SELECT source_topic, sensor, seq FROM {base.output_table(job)} WHERE run = %s ORDER BY id", (run_id,))]
    per_group: dict[str, Delivery] = {g: account(acked, ids, order="per-key") for g, ids in seen.items()}
    checks = {f"group {g} saw every record of every producer": d.lost == 0 for g, d in per_group.items()}
    checks["producers wrote concurrently"] = all(p.acked for p in produced) and len(produced) >= 2
    notes = [f"{g}: {d.received} received, {d.lost} lost, {d.duplicated} duplicated, {d.reordered} reordered"
             for g, d in per_group.items()]
    notes.append("producers: " + ", ".join(f"{p.topic} {len(p.acked)} acked in {p.seconds:.1f}s" for p in produced))
    return base.Outcome(KEY, [job], combine(list(per_group.values())), base.promise(job),
                        records_in=len(acked), records_out=sum(len(ids) for ids in seen.values()),
                        checks=checks, notes=notes)

"""self-managed offsets: state and offsets in one PostgreSQL transaction; the consumer
is SIGKILLed mid-stream and restarted from the stored offsets. Per-sensor counts must
equal what was produced: a record applied twice shows as a duplicate, one skipped as
lost."""

from __future__ import annotations

import json
from collections import Counter

from kafka_patterns import generator, pg
from kafka_patterns.delivery import Delivery
from kafka_patterns.jobs import self_managed_offsets as job_module
from kafka_patterns.scenarios import base

KEY = "self-managed-offsets"
ORDER = 130
JOBS = ["self-managed-offsets"]


@base.timed
def run(records: int = 6_000, kills: int = 2) -> base.Outcome:
    job = JOBS[0]
    topic = base.input_topics(job)[0]
    run_id = base.new_run()
    name = f"smo-{run_id}"
    pg.ensure(*job_module.DDL)
    starting = base.end_offsets([topic])[topic]
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    produced = generator.produce(topic, records, run=run_id)
    end = base.end_offsets([topic])[topic]
    total = sum(end.values()) - sum(starting.values())
    args = ["--consumer", name, "--from-offsets", json.dumps(starting), "--batch", "100"]
    notes = []
    for k in range(kills):
        proc = base.spawn_job(job, args)
        base.wait_for_rows(f"SELECT COALESCE(sum(n), 0) FROM {job_module.TABLE} WHERE consumer = %s", (name,),
                           total * (k + 1) // (kills + 1), 60, f"{job} to apply more records")
        base.hard_kill(proc)
        notes.append(f"SIGKILL {k + 1}")
        base.progress(f"{KEY}: consumer SIGKILLed ({k + 1}/{kills}); restarting from the offsets in PostgreSQL")
    base.spawn_job(job, [*args, "--max-idle-seconds", "2"]).wait(timeout=120)
    state = {s: (n, last) for s, n, last in pg.query(
        f"SELECT sensor, n, last_seq FROM {job_module.TABLE} WHERE consumer = %s", (name,))}
    expected = Counter(sensor for sensor, _ in produced.acked)
    lost = sum(max(0, expected[s] - state.get(s, (0, 0))[0]) for s in expected)
    duplicated = sum(max(0, n - expected[s]) for s, (n, _) in state.items())
    applied = sum(n for n, _ in state.values())
    offsets = dict(pg.query("SELECT kafka_partition, next_offset FROM consumer_offsets WHERE consumer = %s", (name,)))
    last_seq_ok = all(state.get(s, (0, -1))[1] == max(q for x, q in produced.acked if x == s) for s in expected)
    d = Delivery(len(produced.acked), applied, lost, duplicated, 0)
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(produced.acked), applied,
                        checks={"stored offsets equal the topic end": offsets == end,
                                "last seq per sensor equals the produced maximum": last_seq_ok},
                        notes=[f"{kills} SIGKILLs; state rebuilt exactly from the offsets stored with it"])

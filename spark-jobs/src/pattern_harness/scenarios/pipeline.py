"""pipes and filters: readings (some malformed) through clean -> enrich -> aggregate ->
sink, each stage a separate bounded run. Checked: every valid reading is accounted
in the PostgreSQL window aggregates (per station and window, counts and sums equal a
Python computation over the acknowledged readings), every malformed record is in the
dead-letter topic with a reason, every enriched reading carries its station's
profile, and no stage reads the topic it writes.

Delivery is end to end, per window: a window short of readings counts them as lost,
one with too many as duplicated (the Kafka stages may duplicate; the sink's
upsert must absorb it). Duplicates between stages are reported in the notes."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs.pipeline import STAGES, WINDOW_MS, stage_of
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import Delivery, account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
STATIONS = 4
# What the faults tier's matrix may inject into the clean stage, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 1_200, "malformed": 20}


def stages() -> dict[str, catalogue.Job]:
    """The pattern's jobs by the stage their catalogue args give them, in pipeline order."""
    by_stage = {stage_of(job): job for job in PATTERN.jobs}
    return {stage: by_stage[stage] for stage in STAGES}


def profiles(run: str, stations: int = STATIONS) -> dict[str, dict]:
    """station -> its profile (the run id in the name shows which version was joined)."""
    return {f"station-{i}": {"station": f"station-{i}", "name": f"Station {i} ({run})", "region": f"region-{i % 2}",
                             "elevation_m": 100.0 * i} for i in range(stations)}


def expected_windows(acked: list[readings.Reading]) -> dict[tuple[str, int], tuple[int, float]]:
    """(station, window start ms) -> (count, temperature sum) over the readings."""
    out: dict[tuple[str, int], list] = defaultdict(lambda: [0, 0.0])
    for r in acked:
        w = out[(r.station, r.ts // WINDOW_MS * WINDOW_MS)]
        w[0] += 1
        w[1] += r.temperature
    return {k: (n, s) for k, (n, s) in out.items()}


def window_gaps(want: dict, got: dict) -> tuple[int, int]:
    """(missing, extra) readings summed over windows."""
    missing = sum(max(0, n - got.get(k, (0, 0))[0]) for k, (n, _) in want.items())
    extra = sum(max(0, n - want.get(k, (0, 0))[0]) for k, (n, _) in got.items())
    return missing, extra


def produce_profiles_and_malformed(run: str, malformed: int) -> list[str]:
    """The station profiles (compacted topic, keyed by station) and `malformed` bad
    records keyed malformed-<run>-<i>; returns the malformed keys."""
    producer = kafka.producer()
    (profiles_topic,) = stages()["enrich"].lookups
    for station, profile in profiles(run).items():
        producer.produce(profiles_topic, key=station, value=json.dumps(profile))
    keys = [f"malformed-{run}-{i}" for i in range(malformed)]
    (raw,) = stages()["clean"].inputs
    for i, k in enumerate(keys):
        producer.produce(raw, key=k, value=generator.MALFORMED[i % len(generator.MALFORMED)])
    if producer.flush(30):
        raise RuntimeError("profiles/malformed records not acknowledged within 30s")
    return keys


def clean_with_faults(run_id: str, starting: dict, cleaned: str, faults: Sequence[base.FailureMode], total: int,
                      timeout: float = 90) -> list[str]:
    """Run the clean stage as its own process and SIGKILL or stop it mid-stream, once
    per fault, each time once the cleaned topic has grown, restarting from its
    checkpoint (a batch written but not committed is written again: duplicates
    downstream). The caller drains the stage bounded afterwards."""
    base.unsupported(faults, FAULTS, f"{KEY} clean stage")
    job = stages()["clean"].name
    log = base.job_log(job, run_id)
    args = base.job_args(job, run_id, starting, "--max-offsets-per-trigger", str(max(50, total // 8)),
                         "--trigger-seconds", "0.5", bounded=False)
    done = []

    def written() -> int:
        return sum(base.end_offsets([cleaned])[cleaned].values())

    for k, mode in enumerate(faults):
        before = written()
        proc = base.spawn_job(job, args, log)
        try:
            kafka.wait_until(lambda b=before: written() >= b + 50, timeout, what=f"{job} to write more")
            rc = proc.kill(mode)
        finally:
            proc.hard_kill()
        done.append(f"{mode.value} of the clean stage after {written() - before} more records written (exit {rc})")
        base.progress(f"{KEY}: fault {k + 1}/{len(faults)}: {done[-1]}; restarting from its checkpoint")
    return done


@base.timed
def run(records: int = 1_500, malformed: int = 30, faults: Sequence[base.FailureMode] = ()) -> base.Outcome:
    jobs = stages()
    # What each stage reads: raw readings, then what the stage before it wrote.
    reads = {stage: job.inputs[0] for stage, job in jobs.items()}
    raw, cleaned, enriched, aggregated = reads.values()
    deadletter = jobs["clean"].deadletter_topic
    run_id = base.new_run()
    start = base.end_offsets([raw, cleaned, enriched, aggregated, deadletter])
    base.progress(f"{KEY}: producing {STATIONS} station profiles, {records} readings and {malformed} malformed "
                  f"records to {raw}")
    bad_keys = produce_profiles_and_malformed(run_id, malformed)
    produced = generator.produce(raw, records, run=run_id)
    injected = []
    for stage, job in jobs.items():
        topic = reads[stage]
        base.progress(f"{KEY}: stage {stage}: {topic} -> {', '.join(job.outputs)}")
        if stage == "clean" and faults:
            injected = clean_with_faults(run_id, {topic: start[topic]}, cleaned, faults, records)
        base.run_job(job.name, run_id, {topic: start[topic]})

    # Dead letters: exactly the malformed records, each with a reason.
    dead = [m for m in base.read_records({deadletter: start[deadletter]})
            if (m.key() or b"").decode().startswith(f"malformed-{run_id}-")]
    reason_of = {m.key().decode(): dict(m.headers() or []).get("reason") for m in dead}
    reasons = {key: reason.decode() if reason is not None else None for key, reason in reason_of.items()}
    # Enriched readings: each valid reading, each with its station's profile.
    want_profiles = profiles(run_id)
    enriched_ids, unprofiled = [], 0
    for m in base.read_records({enriched: start[enriched]}):
        v = json.loads(m.value())
        if v.get("run") == run_id:
            enriched_ids.append((v["sensor"], v["seq"]))
            unprofiled += v.get("name") != want_profiles.get(v["station"], {}).get("name")
    stage_d = account(produced.acked, enriched_ids, order="none")
    cleaned_ids = [(r.sensor, r.seq) for m in base.read_records({cleaned: start[cleaned]})
                   if (r := readings.parse(m.value())[0]) is not None and r.run == run_id]
    cleaned_d = account(produced.acked, cleaned_ids, order="none")
    # The sink: window aggregates against Python's.
    got = {(s, w): (n, t) for s, w, n, t in postgres.query(
        f"SELECT station, window_start, n, temperature_sum FROM {jobs['sink'].table} "
        "WHERE run = %s", (run_id,))}
    want = expected_windows(produced.readings)
    missing, extra = window_gaps(want, got)
    accounted = sum(n for n, _ in got.values())
    delivery = Delivery(acked=len(produced.acked), received=accounted, lost=missing, duplicated=extra, reordered=0)
    checks = {
        "every valid reading accounted in its station window": missing == 0 and got.keys() == want.keys(),
        "window sums = Python's": all(abs(got[k][1] - want[k][1]) < 1e-6 for k in want if k in got),
        "every malformed record dead-lettered with a reason": set(reasons) == set(bad_keys) and all(reasons.values()),
        "every enriched reading carries its station's profile": unprofiled == 0 and stage_d.lost == 0,
        "cleaned topic: every valid reading": cleaned_d.lost == 0,
        "no stage reads the topic it writes": all(
            not set(base.input_topics(j)) & set(base.output_topics(j)) for j in JOBS),
    }
    notes = [f"dead letters: {len(dead)} for {malformed} malformed (reasons: "
             f"{', '.join(sorted(set(filter(None, reasons.values()))))})",
             f"cleaned topic: {len(cleaned_ids)} records, {cleaned_d.lost} lost, {cleaned_d.duplicated} duplicated",
             f"enriched topic: {len(enriched_ids)} records, {stage_d.lost} lost, {stage_d.duplicated} duplicated "
             "(at-least-once stage)",
             f"sink: {len(got)} station windows holding {accounted} readings",
             "topic counts include copies written by any other pipeline instance running at the same time "
             "(e.g. `make bench` runs the four stages continuously); the window aggregates count each reading once",
             *injected]
    checks.update(base.fault_check(faults, injected))
    return base.Outcome(KEY, JOBS, delivery, base.promise(jobs["sink"].name), records_in=len(produced.acked),
                        records_out=accounted, checks=checks, notes=notes, faults=injected)

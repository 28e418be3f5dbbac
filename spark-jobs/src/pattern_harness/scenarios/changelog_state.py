"""changelog-state: the job keeping per-sensor state in a compacted changelog is killed
mid-stream (SIGKILLed or stopped, once per fault) and restarted each time with the same
transactional.id, rebuilding its state from the changelog; then it runs until idle.

Measured: (a) the final state in the changelog (read read_committed, last value per
key) against Python's, computed independently over the state found before the run
plus every valid reading of the run's input range (state differences: 0); (b) the
output read read_committed against the acknowledged readings: lost, duplicated,
reordered per sensor; (c) the faults that landed. The changelog is keyed by sensor id,
and every run's sensors are called sensor-NN: the run's state starts from what earlier
runs left, which is why the expectation starts from it too."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import changelog_state as job_module
from kafka_patterns.jobs.changelog_state import SensorState
from kafka_patterns.runtime import readings
from kafka_patterns.runtime.readings import Reading
from pattern_harness import generator
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 3_000}


def expected_state(before: dict[str, SensorState], valid: Iterable[Reading]) -> dict[str, SensorState]:
    """Python's answer, not the job's code: per sensor, the readings grouped and
    summarised at once (count, sum, min, max, highest seq), merged with its state before."""
    grouped: dict[str, list[Reading]] = {}
    for r in valid:
        grouped.setdefault(r.sensor, []).append(r)
    out = dict(before)
    for sensor, rs in grouped.items():
        temps = [r.temperature for r in rs]
        seqs = [r.seq for r in rs]
        if sensor in before:
            b = before[sensor]
            temps_min, temps_max, total, n, last = b.min, b.max, b.sum, b.count, b.last_seq
            out[sensor] = SensorState(n + len(rs), total + math.fsum(temps), min(temps_min, *temps),
                                      max(temps_max, *temps), max(last, *seqs))
        else:
            out[sensor] = SensorState(len(rs), math.fsum(temps), min(temps), max(temps), max(seqs))
    return out


def state_differences(found: dict[str, SensorState], wanted: dict[str, SensorState]) -> list[str]:
    """Sensors whose state differs (missing, extra, or a field off; sums compared to a
    relative 1e-9: the job adds one reading at a time, Python sums them at once)."""
    out = []
    for sensor in sorted(found.keys() | wanted.keys()):
        f, w = found.get(sensor), wanted.get(sensor)
        if f is None or w is None:
            out.append(f"{sensor}: {'missing' if f is None else 'unexpected'} in the changelog")
        elif (f.count, f.min, f.max, f.last_seq) != (w.count, w.min, w.max, w.last_seq) or not math.isclose(
                f.sum, w.sum, rel_tol=1e-9, abs_tol=1e-9):
            out.append(f"{sensor}: {f} instead of {w}")
    return out


def valid_readings(topic: str, start: dict[int, int], end: dict[int, int]) -> list[Reading]:
    """The readings of the topic's range [start, end) that keep the contract."""
    parsed = (readings.parse(m.value())[0] for m in base.read_records({topic: start}, {topic: end}))
    return [r for r in parsed if r is not None]


@base.timed
def run(records: int = 4_000,
        faults: Sequence[base.FailureMode] = (base.FailureMode.SIGKILL,) * 3) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    spec = catalogue.job(job)
    (source,), (changelog,), (totals,) = spec.inputs, spec.state, spec.output_topics
    run_id = base.new_run()
    group = tid = f"{job}-{run_id}"  # the job's group and transactional id carry its name (its ACLs)
    start_in, start_out = base.end_offsets([source])[source], base.end_offsets([totals])[totals]
    before = job_module.read_state(changelog, f"verify-{run_id}")
    base.progress(f"{KEY}: {len(before)} sensors in {changelog} before the run; producing {records} readings "
                  f"to {source}")
    produced = generator.produce(source, records, run=run_id)
    end_in = base.end_offsets([source])[source]
    base.seed_group(group, source, start_in)
    base_total, in_range = sum(start_in.values()), sum(end_in.values()) - sum(start_in.values())
    # Static membership: a restarted instance takes its partitions back at once.
    args = ["--group", group, "--transactional-id", tid, "--instance-id", tid, "--batch", "100"]
    log = base.job_log(job, run_id)
    injected: list[str] = []
    probe = kafka.consumer(group)  # reads the group's committed offsets, never joins it

    def committed() -> int:
        return base.committed_total(probe, group, source) - base_total

    def committed_past(at_least: int, proc: base.JobService) -> int:
        # Each wait includes a rebuild, which may wait out a foreign open transaction.
        return base.committed_past(probe, group, source, base_total, at_least, proc, job_module.REBUILD_TIMEOUT)

    proc = None
    try:
        for k, mode in enumerate(faults):
            # The successor first: an instance killed inside a transaction leaves offsets
            # pending in it, and the probe's offset fetch (read_committed asks for stable
            # offsets) waits until the successor's initTransactions aborts it.
            proc = base.spawn_job(job, args, log)
            done = committed()
            n = committed_past(done + max(1, (in_range - done) // (len(faults) + 1 - k)), proc)
            rc = proc.kill(mode)
            injected.append(f"{mode.value} at {n}/{in_range} committed (exit {rc})")
            base.progress(f"{KEY}: fault {k + 1}/{len(faults)}: {injected[-1]}; restarting, state rebuilt from "
                          f"{changelog}")
        proc = base.spawn_job(job, [*args, "--max-idle-seconds", "3"], log)
        rc = proc.wait(timeout=job_module.REBUILD_TIMEOUT + 120)
        final_committed = committed()
    finally:
        probe.close()
        if proc is not None and proc.alive():
            proc.hard_kill()
    found = job_module.read_state(changelog, f"verify-{run_id}")
    differences = state_differences(found, expected_state(before, valid_readings(source, start_in, end_in)))
    seen = base.read_committed(totals, start_out, run_id, len(produced.acked))
    # Read uncommitted, the outputs of the transactions the kills left open (and the
    # restarts aborted) show too: how much a read_committed reader was spared.
    written = sum(r is not None and r.run == run_id for r, _ in
                  (readings.parse(m.value()) for m in job_module.read_whole(totals, f"verify-{run_id}",
                                                                            start=start_out, committed_only=False)))
    d = account(produced.acked, seen, order="per-key")
    kills = sum(f.startswith(base.FailureMode.SIGKILL.value) for f in injected)
    checks = {**base.fault_check(faults, injected),
              "the last run ended cleanly after idling": rc == 0,
              "the group committed the whole input range": final_committed == in_range,
              "the changelog's state equals Python's (0 state differences)": not differences}
    notes = [f"{kills} kills, {len(faults) - kills} other faults: {'; '.join(injected) or 'none'}",
             f"{written - len(seen)} outputs of aborted transactions hidden from read_committed",
             f"{len(differences)} state differences over {len(found)} sensors"
             + (f": {'; '.join(differences[:3])}" if differences else "")]
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(produced.acked), len(seen), checks=checks,
                        notes=notes, faults=injected)

"""batch (scheduled): the batch job runs, more readings arrive, it runs again, and a
third run finds nothing new. Measured: the ranges the runs read are contiguous and
non-overlapping, the aggregates equal a Python computation over the produced
readings (count, temperature sum, last seq per sensor), and the second run aggregated
only the new readings. With the crash-after-write fault a first attempt dies after
writing and before committing: it must leave nothing, and the next run reads the
same range.

Isolation: weather.readings is shared with other scenarios (and other runs of this
one). The scenario uses its own ledger key (`batch-<run>`), so the stored ranges are
this run's; its first run starts at the end offsets captured before producing, and
each run reads up to the end offsets captured right after the scenario produced
(--ending-offsets), so what others produce later is not in this run's ranges. Others'
readings produced in between do fall inside the ranges: aggregates are keyed by the
producer run, and the accounting only looks at this run's rows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from kafka_patterns.clients import postgres
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import batch_aggregate
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import Delivery
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.CRASH_AFTER_WRITE,)
FAULT_RUN = {"records": 1_500, "more": 1_000}


def contiguous(ranges: list[tuple[int, str, int, int, int]], first: dict, ends: list[dict]) -> bool:
    """Run k's range starts where run k-1 ended (run 1 at `first`) and ends at ends[k-1]."""
    by_run: dict[int, dict[tuple[str, int], tuple[int, int]]] = defaultdict(dict)
    for batch_run, t, p, s, e in ranges:
        by_run[batch_run][(t, p)] = (s, e)
    if sorted(by_run) != list(range(1, len(ends) + 1)):
        return False
    previous = {(t, p): o for t, ps in first.items() for p, o in ps.items()}
    for k, end in enumerate(ends, start=1):
        wanted_end = {(t, p): o for t, ps in end.items() for p, o in ps.items()}
        got = by_run[k]
        if set(got) != set(wanted_end):
            return False
        if any(got[tp] != (previous[tp], wanted_end[tp]) for tp in got):
            return False
        previous = wanted_end
    return True


@base.timed
def run(records: int = 3_000, more: int = 2_000, faults: Sequence[base.FailureMode] = ()) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    ledger = f"batch-{run_id}"
    postgres.ensure(*batch_aggregate.DDL, table=table)
    first = base.end_offsets([topic])
    base.progress(f"{KEY}: producing {records} readings to {topic}")
    batch1 = generator.produce(topic, records, run=run_id)
    end1 = base.end_offsets([topic])
    ending = ("--ledger-key", ledger, "--ending-offsets")
    crash_checks, injected = {}, []
    if faults:
        base.progress(f"{KEY}: batch run 1 as a process, crashing after its writes, before its commit")
        log = base.job_log(job, run_id)
        proc = base.spawn_job(job, base.job_args(job, run_id, first, *ending, base.spark_offsets(end1)), log,
                              env={"KP_CRASH_BEFORE_COMMIT": "1"})
        rc = proc.wait(timeout=120)
        left = postgres.query(f"""SELECT (SELECT count(*) FROM batch_ranges WHERE ledger_key = %s)
                            + (SELECT count(*) FROM {table} WHERE ledger_key = %s)""",
                        (ledger, ledger))[0][0]
        injected.append(f"{base.FailureMode.CRASH_AFTER_WRITE.value} of batch run 1, before its commit (exit {rc})")
        crash_checks = {"the run crashed before its commit (exit 137)": rc == 137,
                        "the crashed run left no range and no aggregates behind": left == 0,
                        **base.fault_check(faults, injected)}
    base.progress(f"{KEY}: batch run 1 (Spark batch, ledger key {ledger})")
    base.run_job(job, run_id, first, *ending, base.spark_offsets(end1))
    base.progress(f"{KEY}: producing {more} more readings, batch run 2")
    batch2 = generator.produce(topic, more, run=run_id, seq_start=records)
    end2 = base.end_offsets([topic])
    base.run_job(job, run_id, first, *ending, base.spark_offsets(end2))
    base.progress(f"{KEY}: batch run 3 with nothing new (must be a no-op)")
    base.run_job(job, run_id, first, *ending, base.spark_offsets(end2))

    ranges = postgres.query("""SELECT batch_run, topic, kafka_partition, start_offset, end_offset FROM batch_ranges
                         WHERE ledger_key = %s ORDER BY batch_run, topic, kafka_partition""", (ledger,))
    runs = postgres.query("SELECT count(*) FROM batch_runs WHERE ledger_key = %s", (ledger,))[0][0]
    rows = postgres.query(f"""SELECT batch_run, sensor, n, temperature_sum, last_seq FROM {table}
                        WHERE ledger_key = %s AND run = %s""", (ledger, run_id))
    got: dict[str, list] = defaultdict(lambda: [0, 0.0, -1])
    per_run: dict[int, int] = defaultdict(int)
    second_min_seq_ok = True
    for batch_run, sensor, n, tsum, last in rows:
        g = got[sensor]
        g[0], g[1], g[2] = g[0] + n, g[1] + tsum, max(g[2], last)
        per_run[batch_run] += n
        if batch_run == 1 and last >= records:
            second_min_seq_ok = False
    want = readings.totals_per_sensor([*batch1.readings, *batch2.readings])
    acked = len(batch1.acked) + len(batch2.acked)
    lost = sum(max(0, n - got[s][0]) for s, (n, _, _) in want.items())
    duplicated = sum(max(0, g[0] - want.get(s, (0,))[0]) for s, g in got.items())
    received = sum(g[0] for g in got.values())
    values_ok = set(got) == set(want) and all(
        got[s][0] == n and abs(got[s][1] - tsum) < 1e-6 * max(1.0, abs(tsum)) and got[s][2] == last
        for s, (n, tsum, last) in want.items())
    checks = {
        "ranges contiguous and non-overlapping, run 1 from the start, each to its end": contiguous(
            ranges, first, [end1, end2]),
        "run 1 aggregated the first batch only, run 2 only the new readings":
            (per_run.get(1), per_run.get(2)) == (len(batch1.acked), len(batch2.acked)) and second_min_seq_ok,
        "per-sensor count, temperature sum and last seq equal Python's over the input": values_ok,
        "the run with nothing new was a no-op": runs == 2,
        **crash_checks,
    }
    return base.Outcome(KEY, JOBS, Delivery(acked, received, lost, duplicated, 0), base.promise(job),
                        acked, received, checks=checks, faults=injected,
                        notes=[f"3 runs, ledger key {ledger}: {per_run.get(1, 0)} + {per_run.get(2, 0)} readings "
                               "aggregated, third run a no-op"])

"""sql-stream: the rows a stream defined in SQL writes equal the same windows computed
in plain Python over the same readings.

The scenario places readings in event time itself (a clock it gives the generator):
phase 1 fills six 10-second windows and runs the job; phase 2 fills the next six, with
a share of late readings (measured minutes before phase 1's windows, which the
watermark has closed), and runs the job again from its checkpoint. The reference
(expected_windows) is the query of catalogue/sql/station_heat_windows.sql written in
Python, watermark included, per run of the job: a run is one micro-batch (no
--max-offsets-per-trigger), a reading whose window ends at or before the watermark of
the runs before is late and dropped, and after a run the watermark is the newest
event time the query kept (Spark applies the temperature filter below the watermark:
it does not read the event time) minus 10 s; a window is written once the watermark
reaches its end, the newer ones stay open.

Judged per (station, window): lost (expected, not written), duplicated (written more
than once), extra (written, not expected: an open window, a late reading's window)
and different (written with another count, average or maximum)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafka_patterns.config import catalogue
from kafka_patterns.runtime import readings
from pattern_harness import generator
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names

# What the query of the job's .sql file says, restated for the Python reference (the
# unit tests run the SQL and this reference on the same readings).
HEAT_C = 25.0  # WHERE temperature > 25.0
WINDOW_MS = 10_000  # window(event_time, '10 seconds')
WATERMARK_MS = 10_000  # WATERMARK event_time DELAY OF INTERVAL 10 SECONDS
# The scenario's event-time layout: windows per phase, and how far in the past the first
# one starts (inside the reading contract's range, clear of the wall clock).
WINDOWS_PER_PHASE = 6
START_BEHIND_MS = 600_000


@dataclass(frozen=True)
class Window:
    """One result row of the query, as the reference computes it."""
    run: str
    station: str
    window_start: int
    window_end: int
    readings: int
    avg_temperature: float
    max_temperature: float

    @property
    def id(self) -> tuple[str, int]:
        return (self.station, self.window_start)

    def matches(self, row: dict) -> bool:
        """The written row says the same (the average to floating-point rounding)."""
        return (row.get("key") == self.station and row.get("window_end") == self.window_end
                and row.get("readings") == self.readings and row.get("max_temperature") == self.max_temperature
                and math.isclose(row.get("avg_temperature") or math.nan, self.avg_temperature, rel_tol=1e-9))


def window_start(r: readings.Reading) -> int:
    return r.ts // WINDOW_MS * WINDOW_MS


@dataclass
class Expected:
    windows: dict[tuple[str, int], Window]  # written: closed by the final watermark
    open_windows: dict[tuple[str, int], Window]  # in state, not written (the watermark is not at their end)
    late: list[readings.Reading]  # dropped: their window had closed when they came
    kept: int  # readings past the filter and in time (in a written or an open window)


def expected_windows(runs: Sequence[Iterable[readings.Reading]]) -> Expected:
    """The query over `runs` (the readings each run of the job takes, in one micro-batch
    each), in Python: readings above HEAT_C, per (run, station, event-time window)
    count, average and maximum; the watermark and the windows it closes as above."""
    watermark = -math.inf
    groups: dict[tuple[str, str, int], list[float]] = {}
    late: list[readings.Reading] = []
    for batch in runs:
        hot = [r for r in batch if r.temperature > HEAT_C]
        for r in hot:
            if window_start(r) + WINDOW_MS <= watermark:
                late.append(r)
            else:
                groups.setdefault((r.run, r.station, window_start(r)), []).append(r.temperature)
        watermark = max([watermark, *(r.ts - WATERMARK_MS for r in hot)])
    windows = [Window(run, station, start, start + WINDOW_MS, len(temps), sum(temps) / len(temps), max(temps))
               for (run, station, start), temps in groups.items()]
    return Expected({w.id: w for w in windows if w.window_end <= watermark},
                    {w.id: w for w in windows if w.window_end > watermark}, late, sum(map(len, groups.values())))


def event_clock(start_ms: int, count: int, windows: int) -> Callable[[int], int]:
    """The generator's clock: the i-th of `count` readings evenly over `windows` windows
    from start_ms; the generator's skew (up to SKEW_MS behind) is kept inside them."""
    skew = generator.SKEW_MS[1]
    span = windows * WINDOW_MS - skew
    return lambda i: start_ms + skew + i * span // max(count, 1)


def written_rows(messages: Iterable, run: str) -> list[dict]:
    """The run's result rows among the output topic's records (JSON values)."""
    rows = []
    for m in messages:
        row = json.loads(m.value())
        if row.get("run") == run:
            rows.append(row)
    return rows


@base.timed
def run(records: int = 1_200, late: float = 0.1) -> base.Outcome:
    job = JOBS[0]
    (topic,), (out,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    starting, out_start = base.end_offsets([topic]), base.end_offsets([out])
    t0 = (time.time_ns() // 1_000_000 - START_BEHIND_MS) // WINDOW_MS * WINDOW_MS
    first = records // 2
    base.progress(f"{KEY}: phase 1: {first} readings in {WINDOWS_PER_PHASE} windows of event time to {topic}")
    p1 = generator.produce(topic, first, run=run_id, seed=11,
                           clock=event_clock(t0, first, WINDOWS_PER_PHASE))
    base.progress(f"{KEY}: running job {job} (Spark SQL, available-now) -> {out}")
    base.run_job(job, run_id, starting)
    base.progress(f"{KEY}: phase 2: {records - first} readings in the next windows, {late:.0%} of them late")
    p2 = generator.produce(topic, records - first, run=run_id, seed=12, late=late, seq_start=first,
                           clock=event_clock(t0 + WINDOWS_PER_PHASE * WINDOW_MS, records - first,
                                             WINDOWS_PER_PHASE))
    base.run_job(job, run_id, starting)

    want = expected_windows([p1.readings, p2.readings])
    got = written_rows(base.read_records(out_start), run_id)
    ids = [(row.get("station"), row.get("window_start")) for row in got]
    d = account(want.windows, ids, order="none")
    different = sorted({i for i, row in zip(ids, got, strict=True) if i in want.windows
                        and not want.windows[i].matches(row)})
    produced = p1.readings + p2.readings
    checks = {
        "every written window equals Python's (count, average, maximum, key = station)": not different,
        "no window written that Python does not close (open or late)": d.unacked == 0,
        "some readings filtered out (a filter, not a copy)": 0 < want.kept < len(produced),
        "late readings produced and dropped by the watermark": len(want.late) > 0,
        "the newest windows stay open (append mode writes a window once, when final)": bool(want.open_windows),
    }
    notes = [f"{len(produced)} readings, {want.kept} above {HEAT_C} °C in time, {len(want.late)} late ones dropped; "
             f"{len(want.windows)} windows closed by the watermark, {len(want.open_windows)} still open",
             f"written: {len(got)} rows; lost {d.lost}, duplicated {d.duplicated}, extra {d.unacked}, "
             f"different {len(different)}" + (f" (first: {different[0]})" if different else "")]
    return base.Outcome(KEY, JOBS, d, base.promise(job), records_in=len(produced), records_out=len(got),
                        checks=checks, notes=notes)

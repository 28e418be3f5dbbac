"""single partition, total order: every reading through the 1-partition topic arrives
in the global order it was produced (seq order across all sensors)."""

from __future__ import annotations

from kafka_patterns.scenarios import base
from kafka_patterns.scenarios.one_to_one import produce_run_and_account

KEY = "total-order"
ORDER = 20
JOBS = ["total-order"]


@base.timed
def run(records: int = 3_000) -> base.Outcome:
    return produce_run_and_account(KEY, JOBS[0], records, "total")

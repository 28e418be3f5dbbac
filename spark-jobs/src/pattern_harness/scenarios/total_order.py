"""single partition, total order: every reading through the 1-partition topic arrives
in the global order it was produced (seq order across all sensors)."""

from __future__ import annotations

from kafka_patterns.config import catalogue
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


@base.timed
def run(records: int = 3_000) -> base.Outcome:
    return base.produce_run_and_account(KEY, JOBS[0], records, "total")

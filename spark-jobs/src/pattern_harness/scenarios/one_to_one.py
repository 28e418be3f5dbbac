"""one-to-one: readings produced with acks=all reach the `readings` table once each,
in per-sensor order."""

from __future__ import annotations

from kafka_patterns.config import catalogue
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


@base.timed
def run(records: int = 5_000) -> base.Outcome:
    return base.produce_run_and_account(KEY, JOBS[0], records, "per-key")

"""one-to-one: readings produced with acks=all reach the `readings` table once each,
in per-sensor order."""

from __future__ import annotations

from kafka_patterns.scenarios import base

KEY = "one-to-one"
ORDER = 10
JOBS = ["one-to-one"]


@base.timed
def run(records: int = 5_000) -> base.Outcome:
    return base.produce_run_and_account(KEY, JOBS[0], records, "per-key")

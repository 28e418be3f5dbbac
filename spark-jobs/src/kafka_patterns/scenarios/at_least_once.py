"""at-least-once (Spark): commit after processing, job SIGKILLed mid-stream and
restarted: nothing lost; a batch written but not yet checkpointed is written again,
and those duplicates are counted."""

from __future__ import annotations

from kafka_patterns import catalogue
from kafka_patterns.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


@base.timed
def run(records: int = 3_000, kills: int = 2) -> base.Outcome:
    return base.killed_job_run(KEY, JOBS[0], records, kills)

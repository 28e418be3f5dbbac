"""exactly-once (Spark): readings -> PostgreSQL through checkpointed micro-batches and a
transactional sink; the job is SIGKILLed mid-stream several times and restarted.
Counts: zero lost, zero duplicated (the table has no unique key that would hide them)."""

from __future__ import annotations

from kafka_patterns import catalogue
from kafka_patterns.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


@base.timed
def run(records: int = 3_000, kills: int = 3) -> base.Outcome:
    return base.killed_job_run(KEY, JOBS[0], records, kills)

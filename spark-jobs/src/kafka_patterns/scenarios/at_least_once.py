"""at-least-once (Spark): commit after processing, job SIGKILLed mid-stream and
restarted: nothing lost; a batch written but not yet checkpointed is written again,
and those duplicates are counted."""

from __future__ import annotations

from kafka_patterns.scenarios import base

KEY = "at-least-once"
ORDER = 110
JOBS = ["at-least-once"]


@base.timed
def run(records: int = 3_000, kills: int = 2) -> base.Outcome:
    return base.killed_job_run(KEY, JOBS[0], records, kills)

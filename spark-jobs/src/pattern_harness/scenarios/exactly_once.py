"""exactly-once (Spark): readings -> PostgreSQL through checkpointed micro-batches and a
transactional sink; the job crashes after a sink write, is SIGKILLed or stopped
mid-stream, and restarts from its checkpoint. Counts: zero lost, zero duplicated (the
table has no unique key that would hide them)."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_patterns.config import catalogue
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = base.RESTARTED_FAULTS
FAULT_RUN = {"records": 2_000}
# What `make run` and `make demo` inject: the worst case for duplicates, a crash after
# the sink write and before the commit (the faults tier runs every mode of FAULTS).
DEMO_FAULTS = (base.FailureMode.CRASH_AFTER_WRITE,)


@base.timed
def run(records: int = 3_000, faults: Sequence[base.FailureMode] = DEMO_FAULTS) -> base.Outcome:
    return base.faulted_job_run(KEY, JOBS[0], records, faults)

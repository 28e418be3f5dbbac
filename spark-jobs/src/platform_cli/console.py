"""What a command that prints a table shows on the terminal, and what goes to its log.

`make demo` prints a line per pattern, the table and its notes. The scenarios' steps,
librdkafka's log lines and the local Spark driver's output go to .run/logs/<name>.log;
V=1 (--verbose) keeps the steps on the terminal, the rest still goes to the log."""

from __future__ import annotations

from pathlib import Path

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from pattern_harness import job_runs
from platform_cli import steps


def log_path(name: str) -> Path:
    return credentials.run_dir() / "logs" / f"{name}.log"


def quiet(name: str, verbose: bool = False) -> Path:
    """Send this process's noise (and unless verbose, the scenarios' steps) to the log."""
    from kafka_patterns.runtime import spark  # pyspark: only commands that run Spark jobs get here

    log = log_path(name)
    steps.keep_previous(log)
    kafka.log_client_messages_to(log)
    spark.log_driver_to(log)
    job_runs.details_to(None if verbose else log)
    return log

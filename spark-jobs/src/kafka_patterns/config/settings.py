"""Runtime settings of the jobs, from the environment or the local inventory.

Locally everything is read from the Ansible inventory; on Kubernetes the chart sets
the environment: KAFKA_BOOTSTRAP_SERVERS, KAFKA_CLIENT_* (TLS/SCRAM), POSTGRES_DSN,
CHECKPOINT_ROOT. A setting that is present but unusable fails fast naming the key.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafka_patterns.config.catalogue import ROOT


class SettingsError(ValueError):
    """A runtime setting is wrong; the message names the environment variable."""


def postgres_dsn() -> str:
    if os.environ.get("POSTGRES_DSN"):
        return os.environ["POSTGRES_DSN"]
    from kafka_patterns.config import inventory

    return inventory.load().postgres_dsn


def checkpoint_root() -> Path:
    root = Path(os.environ.get("CHECKPOINT_ROOT") or ROOT / ".run" / "checkpoints")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SettingsError(f"CHECKPOINT_ROOT={root} is not a writable directory: {e.strerror}") from e
    return root


def kafka_client_overrides() -> dict[str, str]:
    """KAFKA_CLIENT_SASL_MECHANISM=SCRAM-SHA-512 -> {'sasl.mechanism': 'SCRAM-SHA-512'}."""
    return {k.removeprefix("KAFKA_CLIENT_").lower().replace("_", "."): v
            for k, v in os.environ.items() if k.startswith("KAFKA_CLIENT_")}


JOB_RUNNERS = ("local", "kubernetes")


def job_runner() -> str:
    """Where scenarios run Spark jobs: here (local) or as SparkApplications (kubernetes)."""
    runner = os.environ.get("KP_JOB_RUNNER", "local")
    if runner not in JOB_RUNNERS:
        raise SettingsError(f"KP_JOB_RUNNER={runner!r}: expected one of {', '.join(JOB_RUNNERS)}")
    return runner

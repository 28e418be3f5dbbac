"""Suspending and resuming the spark-operator's ScheduledSparkApplications."""

from __future__ import annotations

SCHEDULES = "scheduledsparkapplications.sparkoperator.k8s.io"


def set_suspended(kubectl, namespace: str, name: str, suspended: bool) -> None:
    """kubectl: a runner called as kubectl(*args, check=True) (conftest's)."""
    kubectl("-n", namespace, "patch", SCHEDULES, name, "--type=merge",
            "-p", f'{{"spec": {{"suspend": {str(suspended).lower()}}}}}', check=True)

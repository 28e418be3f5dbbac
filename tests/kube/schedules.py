"""Suspending and resuming the spark-operator's ScheduledSparkApplications."""

from __future__ import annotations

SCHEDULES = "scheduledsparkapplications.sparkoperator.k8s.io"
# Every patch goes through the spark-operator's webhook (failurePolicy Fail). Right after
# a deploy its pod may be restarting or not Ready for a while ("connection refused"):
# the patch is tried again for this long before it counts as failed.
WEBHOOK_GRACE_SECONDS = 180


def set_suspended(kubectl, namespace: str, name: str, suspended: bool) -> None:
    """kubectl: a runner called as kubectl(*args, retry_until_ok=..., check=True) (conftest's)."""
    kubectl("-n", namespace, "patch", SCHEDULES, name, "--type=merge",
            "-p", f'{{"spec": {{"suspend": {str(suspended).lower()}}}}}',
            retry_until_ok=WEBHOOK_GRACE_SECONDS, check=True)

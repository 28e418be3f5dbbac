"""Wait until the spark-operator's webhook admits SparkApplications.

Its pod is Ready before it serves with the CA it writes into the webhook
configurations (a new pod makes a new certificate): until then every SparkApplication
and every Spark pod is refused ("x509: certificate signed by unknown authority"), and a
release of our chart would fail half-way. The probe is a server-side dry run of a
SparkApplication: admission runs, nothing is stored."""

from __future__ import annotations

import asyncio
import time

import pulumi

GROUP, VERSION, PLURAL = "sparkoperator.k8s.io", "v1beta2", "sparkapplications"


def probe_application(spark_version: str) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "SparkApplication",
        "metadata": {"name": "kafka-patterns-webhook-probe"},
        "spec": {"type": "Python", "mode": "cluster", "sparkVersion": spark_version,
                 "mainApplicationFile": "local:///probe.py", "driver": {}, "executor": {}},
    }


def _admitted(namespace: str, spark_version: str) -> str | None:
    """None when a dry-run create is admitted, else why not."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    try:
        config.load_kube_config()
        client.CustomObjectsApi().create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, probe_application(spark_version), dry_run="All")
    except ApiException as refused:
        return f"{refused.status} {refused.reason}: {(refused.body or '')[:300]}"
    except Exception as failed:  # any failure to reach the API is retried
        return str(failed)
    return None


async def wait_admitted(namespace: str, spark_version: str, timeout: float = 600, every: float = 5) -> str:
    """Polls until admitted (returns the namespace, for the chart's release to depend on);
    during a preview nothing is asked."""
    if pulumi.runtime.is_dry_run():
        return namespace
    deadline = time.monotonic() + timeout
    while True:
        why = await asyncio.to_thread(_admitted, namespace, spark_version)
        if why is None:
            return namespace
        if time.monotonic() > deadline:
            raise pulumi.RunError(
                f"the spark-operator webhook did not admit a SparkApplication in {namespace} within {timeout:.0f}s "
                f"(last answer: {why}). Look at `kubectl get pods,validatingwebhookconfigurations` of the "
                "spark-operator and its webhook's log.")
        await asyncio.sleep(every)


def admitted_namespace(namespace: pulumi.Input[str], after: pulumi.Output, spark_version: str) -> pulumi.Output[str]:
    """`namespace` once `after` (the spark-operator release's status) is known and the
    webhook admits SparkApplications there."""
    return pulumi.Output.all(namespace, after).apply(lambda args: wait_admitted(args[0], spark_version))

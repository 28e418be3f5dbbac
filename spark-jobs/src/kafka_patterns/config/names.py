"""The names the chart gives Kubernetes objects, computed once for every Python caller
(the Pulumi program, the harness, the tests). The chart's templates (_helpers.tpl) are
the other implementation; tests/iac/test_names.py renders the chart and holds the two
equal, the chart being the oracle."""

from __future__ import annotations

import hashlib
from typing import Any

# Kubernetes' limit of a DNS-1123 label; a longer name is cut and given a hash.
MAX_NAME = 63
# The chart's kp.cluster cut: Strimzi derives longer names (pods, services) from it.
MAX_CLUSTER_NAME = 40


def k8s_name(name: str) -> str:
    """The chart's kp.k8sName: lower case, dots and underscores as dashes; a name longer
    than 63 is cut to 54 and given 8 hex digits of the original's sha256, so that two
    long names cannot collide."""
    out = name.lower().replace(".", "-").replace("_", "-")
    if len(out) > MAX_NAME:
        out = f"{out[:54].rstrip('-')}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return out


def cluster_name(values: dict[str, Any]) -> str:
    """The chart's kp.cluster: kafka.clusterName, else the catalogue's cluster.name, cut
    to 40 characters."""
    return (values["kafka"].get("clusterName") or values["cluster"]["name"])[:MAX_CLUSTER_NAME].rstrip("-")


def connect_name(values: dict[str, Any]) -> str:
    """The chart's kp.connectName: the KafkaConnect cluster of the release."""
    return f"{cluster_name(values)}-connect"

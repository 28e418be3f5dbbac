"""The test harness on the host as a client of the in-cluster Kafka: through the nodeport
listener of values-local-strimzi.yaml, as the catalogue's harness user, its password
from the KafkaUser's Secret and the cluster CA from Strimzi's Secret. harness_env()
returns the KAFKA_* environment that points kafka_patterns.clients.kafka there, and the
KP_NAMESPACE that points pattern_harness.kube_jobs at the release."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import yaml

from helpers import ROOT

NAMESPACE = "kafka-patterns-strimzi"
CLUSTER = yaml.safe_load((ROOT / "catalogue" / "catalogue.yaml").read_text())["cluster"]["name"]
VALUES = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values-local-strimzi.yaml").read_text())
LISTENER = VALUES["kafka"]["externalListener"]["configuration"]
BOOTSTRAP = f"{LISTENER['bootstrap']['alternativeNames'][0]}:{LISTENER['bootstrap']['nodePort']}"
HARNESS_USER = "harness"
# Where the harness keeps the cluster CA it reads from Strimzi's Secret.
CA_FILE = ROOT / ".run" / "kube" / "strimzi-ca.crt"


def secret_value(kubectl, namespace: str, name: str, key: str) -> bytes:
    data = json.loads(kubectl("get", "-n", namespace, f"secret/{name}", "-o", "json", check=True).stdout)["data"]
    return base64.b64decode(data[key])


def harness_env(kubectl, ca_file: Path = CA_FILE) -> dict[str, str]:
    """The environment of a harness client of the in-cluster Kafka, and of the kube helpers
    in its release's namespace; writes the cluster CA to `ca_file` (0600)."""
    ca_file.parent.mkdir(parents=True, exist_ok=True)
    ca_file.write_bytes(secret_value(kubectl, NAMESPACE, f"{CLUSTER}-cluster-ca-cert", "ca.crt"))
    ca_file.chmod(0o600)
    password = secret_value(kubectl, NAMESPACE, HARNESS_USER, "password").decode()
    return {"KP_NAMESPACE": NAMESPACE, "KAFKA_BOOTSTRAP_SERVERS": BOOTSTRAP,
            "KAFKA_CLIENT_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_CLIENT_SASL_MECHANISM": "SCRAM-SHA-512",
            "KAFKA_CLIENT_SASL_USERNAME": HARNESS_USER, "KAFKA_CLIENT_SASL_PASSWORD": password,
            "KAFKA_CLIENT_SSL_CA_LOCATION": str(ca_file)}

"""The certificates the cluster's TLS endpoints serve, as a client sees them: the Kafka
nodes' client listeners, the Connect workers' and the schema registry's REST APIs."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from cryptography import x509

from kafka_patterns.config import inventory


@dataclass(frozen=True)
class Served:
    endpoint: str  # what serves it, e.g. "kafka-1 (client listener)"
    address: str  # host:port
    pem: str

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.pem.encode())

    def days_left(self, now: datetime | None = None) -> float:
        left = self.certificate.not_valid_after_utc - (now or datetime.now(UTC))
        return left.total_seconds() / 86400


def endpoints(cluster: inventory.Cluster) -> list[tuple[str, str, int]]:
    found = [(f"{n.name} (client listener)", n.host, n.broker_port) for n in cluster.nodes if n.broker_port]
    found += [("Connect REST API", u.hostname, u.port) for u in map(urlsplit, cluster.connect_urls)]
    found += [("schema registry", u.hostname, u.port) for u in map(urlsplit, cluster.registry_urls)]
    return found


def served(cluster: inventory.Cluster) -> list[Served]:
    """Each endpoint's certificate; an endpoint that does not answer is left out."""
    out = []
    for what, host, port in endpoints(cluster):
        try:
            # No verification: this reads what is served, trusted or not.
            out.append(Served(what, f"{host}:{port}", ssl.get_server_certificate((host, port), timeout=5)))
        except OSError:
            continue
    return out

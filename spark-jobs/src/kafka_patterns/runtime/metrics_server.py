"""The /metrics endpoint every long-running process of the platform serves (a job's
streaming metrics, the canary, the lag exporter), with prometheus-client's server."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, start_http_server


class MetricsPortBusy(RuntimeError):
    """The metrics port cannot be bound; the message names it and the option to change."""


def serve(port: int, registry: CollectorRegistry, addr: str = "127.0.0.1"):
    """Start the /metrics server of `registry`; a busy port fails fast, naming it."""
    try:
        server, _thread = start_http_server(port, addr, registry=registry)
    except OSError as e:
        raise MetricsPortBusy(f"metrics port {addr}:{port} is not available ({e.strerror}): "
                              f"choose another with --metrics-port") from None
    return server

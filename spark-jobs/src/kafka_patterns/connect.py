"""Kafka Connect REST helper for the catalogue's connectors (the CDC pattern).

The catalogue holds what a connector does (class, tables, topics, modes); where it
connects (database.* of the Debezium source, connection.* of the JDBC sink) comes
from the inventory at registration time, so no host or password is in the catalogue.
Registration is PUT /connectors/<name>/config: creates or updates, idempotent.

    python -m kafka_patterns.connect [ensure|status]
"""

from __future__ import annotations

import sys
from typing import Any

import requests

from kafka_patterns import catalogue, clients, inventory


def specs() -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in catalogue.load().get("connectors", [])}


def connection_settings(connector_class: str, cluster: inventory.Cluster) -> dict[str, str]:
    """Where a connector of this class connects, from the inventory."""
    if connector_class.endswith("PostgresConnector"):
        return {"database.hostname": cluster.postgres_host, "database.port": str(cluster.postgres_port),
                "database.dbname": cluster.postgres_db, "database.user": cluster.postgres_replication_user,
                "database.password": cluster.postgres_replication_password}
    if connector_class.endswith("JdbcSinkConnector"):
        return {"connection.url": f"jdbc:postgresql://{cluster.postgres_host}:{cluster.postgres_port}/"
                                  f"{cluster.postgres_db}",
                "connection.username": cluster.postgres_user, "connection.password": cluster.postgres_password}
    return {}


def connector_config(spec: dict[str, Any], cluster: inventory.Cluster) -> dict[str, str]:
    """The full config PUT to Connect: class, the catalogue's settings, the connection."""
    return {"connector.class": spec["class"], "tasks.max": "1",
            **{k: str(v) for k, v in spec.get("config", {}).items()},
            **connection_settings(spec["class"], cluster)}


def url(path: str = "") -> str:
    return inventory.load().connect_url.rstrip("/") + path


def ensure(name: str) -> dict[str, Any]:
    """Create or update a catalogue connector; returns Connect's answer."""
    spec = specs()[name]
    r = requests.put(url(f"/connectors/{name}/config"), json=connector_config(spec, inventory.load()), timeout=30)
    if r.status_code >= 400:
        raise RuntimeError(f"Kafka Connect refused connector {name}: {r.status_code} {r.text}")
    return r.json()


def status(name: str) -> dict[str, Any] | None:
    r = requests.get(url(f"/connectors/{name}/status"), timeout=10)
    return None if r.status_code == 404 else r.json()


def running(st: dict[str, Any] | None) -> bool:
    """The connector and every one of its tasks RUNNING (FAILED raises with the trace)."""
    if not st:
        return False
    states = [st["connector"]["state"], *(t["state"] for t in st.get("tasks", []))]
    failed = [t for t in st.get("tasks", []) if t["state"] == "FAILED"]
    if st["connector"]["state"] == "FAILED" or failed:
        trace = (failed[0] if failed else st["connector"]).get("trace", "")
        raise RuntimeError(f"connector {st['name']} FAILED: {trace[:1500]}")
    return bool(st.get("tasks")) and all(s == "RUNNING" for s in states)


def wait_running(name: str, timeout: float = 60) -> dict[str, Any]:
    return clients.wait_until(lambda: (lambda s: s if running(s) else None)(status(name)), timeout,
                              interval=1, what=f"connector {name} to be RUNNING")


def ensure_all(timeout: float = 90) -> dict[str, str]:
    """Every catalogue connector registered and RUNNING: {name: state}."""
    out = {}
    for name in specs():
        ensure(name)
    for name in specs():
        out[name] = wait_running(name, timeout)["connector"]["state"]
    return out


def main(argv: list[str] | None = None) -> int:
    action = (argv if argv is not None else sys.argv[1:]) or ["status"]
    if action[0] == "ensure":
        for name, state in ensure_all().items():
            print(f"{name}: {state}")
    else:
        for name in specs():
            st = status(name)
            print(f"{name}: {st['connector']['state'] if st else 'not registered'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

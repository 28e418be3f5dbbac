"""Kafka Connect REST helper for the catalogue's connectors (the CDC pattern).

The catalogue holds what a connector does (class, tables, topics, modes); where it
connects (database.* of the Debezium source, connection.* of the JDBC sink) comes
from the inventory at registration time, so no host or password is in the catalogue.
Passwords are not sent either: a connector gets `${file:<secrets file>:<key>}`
references that the workers' FileConfigProvider resolves from their secrets file
(role kafka_connect writes it), so Connect stores, and GET /connectors/<name>/config
shows, only the reference.

The REST API is HTTPS (a certificate of the project CA) with HTTP Basic
authentication; the REST user, its password file and the secrets file's path are in
the client file role kafka_connect writes on the control machine
(.run/kafka-access/connect.json). Registration is PUT /connectors/<name>/config:
creates or updates, idempotent.

    python -m kafka_patterns.clients.connect [ensure|status]
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import requests

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, credentials, inventory


def client_file() -> Path:
    """Written by role kafka_connect (connect_client_file) into the cluster's state
    directory: no secret in it, only where they are."""
    return credentials.run_dir() / "kafka-access" / "connect.json"

# The keys of the workers' secrets file the connectors reference (connect_connector_secrets).
REPLICATION_PASSWORD_KEY = "postgresql.replication.password"
APP_PASSWORD_KEY = "postgresql.app.password"


class ConnectAccessError(RuntimeError):
    """What a client needs to reach the REST API is missing; the message names the fix."""


@dataclass(frozen=True)
class Access:
    """How a client on the control machine reaches the REST API and refers to secrets."""

    rest_user: str
    rest_password_file: Path
    ca_file: Path
    secrets_file: str
    secret_keys: tuple[str, ...]

    @property
    def rest_password(self) -> str:
        try:
            value = self.rest_password_file.read_text().strip()
        except FileNotFoundError:
            raise ConnectAccessError(f"no password of the Connect REST user {self.rest_user!r} in "
                                     f"{self.rest_password_file}: run `make up` (role kafka_connect makes it)"
                                     ) from None
        if not value:
            raise ConnectAccessError(f"{self.rest_password_file} is empty: delete it and run `make up`")
        return value

    @property
    def auth(self) -> tuple[str, str]:
        return self.rest_user, self.rest_password


@cache
def access(path: Path | None = None) -> Access:
    path = path or client_file()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConnectAccessError(f"no Kafka Connect client file {path}: run `make up` (role kafka_connect writes "
                                 f"it with the REST user, its password file and the workers' secrets file)") from None
    ca = Path(data.get("ca_file") or credentials.ca_file())
    return Access(data["rest_user"], Path(data["rest_password_file"]), ca if ca.exists() else credentials.ca_file(),
                  data["secrets_file"], tuple(data.get("secret_keys", ())))


def secret_ref(key: str, secrets_file: str | None = None) -> str:
    """A reference the workers' FileConfigProvider resolves: ${file:<secrets file>:<key>}."""
    return f"${{file:{secrets_file or access().secrets_file}:{key}}}"


def specs() -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in catalogue.load().get("connectors", [])}


def connection_settings(connector_class: str, cluster: inventory.Cluster,
                        secrets_file: str | None = None) -> dict[str, str]:
    """Where a connector of this class connects, from the inventory; its password as a
    reference into the workers' secrets file, never the password itself."""
    if connector_class.endswith("PostgresConnector"):
        return {"database.hostname": cluster.postgres_host, "database.port": str(cluster.postgres_port),
                "database.dbname": cluster.postgres_db, "database.user": cluster.postgres_replication_user,
                "database.password": secret_ref(REPLICATION_PASSWORD_KEY, secrets_file)}
    if connector_class.endswith("JdbcSinkConnector"):
        return {"connection.url": f"jdbc:postgresql://{cluster.postgres_host}:{cluster.postgres_port}/"
                                  f"{cluster.postgres_db}",
                "connection.username": cluster.postgres_user,
                "connection.password": secret_ref(APP_PASSWORD_KEY, secrets_file)}
    return {}


def connector_config(spec: dict[str, Any], cluster: inventory.Cluster,
                     secrets_file: str | None = None) -> dict[str, str]:
    """The full config PUT to Connect: class, the catalogue's settings, the connection."""
    return {"connector.class": spec["class"], "tasks.max": "1",
            **{k: str(v) for k, v in spec.get("config", {}).items()},
            **connection_settings(spec["class"], cluster, secrets_file)}


def url(path: str = "") -> str:
    return inventory.load().connect_url.rstrip("/") + path


def request(method: str, path: str, base_url: str | None = None, timeout: float = 30,
            **kwargs: Any) -> requests.Response:
    """One REST call over HTTPS (the project CA), as the REST user."""
    a = access()
    target = (base_url.rstrip("/") + path) if base_url else url(path)
    return requests.request(method, target, auth=a.auth, verify=str(a.ca_file), timeout=timeout, **kwargs)


def ensure(name: str) -> dict[str, Any]:
    """Create or update a catalogue connector, and restart what of it FAILED (an
    unchanged config restarts nothing, e.g. a source whose table was created after it
    first failed); returns Connect's answer to the config."""
    spec = specs()[name]
    r = request("PUT", f"/connectors/{name}/config", json=connector_config(spec, inventory.load()))
    if r.status_code >= 400:
        raise RuntimeError(f"Kafka Connect refused connector {name}: {r.status_code} {r.text}")
    st = status(name)
    if st and "FAILED" in (st["connector"]["state"], *(t["state"] for t in st.get("tasks", []))):
        request("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true").raise_for_status()
    return r.json()


def status(name: str) -> dict[str, Any] | None:
    r = request("GET", f"/connectors/{name}/status", timeout=10)
    if r.status_code == 404:
        return None
    r.raise_for_status()
    return r.json()


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
    return kafka.wait_until(lambda: (lambda s: s if running(s) else None)(status(name)), timeout,
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

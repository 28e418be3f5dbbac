"""Where the cluster's parts listen, read from the Ansible inventory (one source).

    python -m kafka_patterns.config.inventory bootstrap   # comma-separated bootstrap servers
    python -m kafka_patterns.config.inventory is-up       # exit 0 when every part listens
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from kafka_patterns.config.catalogue import ROOT

DEFAULT_INVENTORY = ROOT / "ansible" / "inventories" / "local"


@dataclass(frozen=True)
class Node:
    name: str
    node_id: int
    host: str
    broker_port: int | None
    controller_port: int | None
    rack: str
    roles: tuple[str, ...]
    # The REPLICATION listener (mutual TLS between brokers), brokers only.
    replication_port: int | None = None


@dataclass(frozen=True)
class Cluster:
    nodes: tuple[Node, ...]
    connect_urls: tuple[str, ...]
    postgres_host: str
    postgres_port: int
    postgres_db: str
    postgres_user: str
    # Never in a repr: a failing test prints its fixtures' values.
    postgres_password: str = field(repr=False)
    run_dir: Path
    # The replication role Debezium connects as (CDC).
    postgres_replication_user: str = "cdc"
    postgres_replication_password: str = field(default="", repr=False)
    # (what, host, port) of the monitoring services (role monitoring): Prometheus, the
    # canary, the lag exporter; empty when the inventory has no monitoring host.
    monitoring: tuple[tuple[str, str, int], ...] = ()
    # The schema registry's HTTPS API (role schema_registry), one URL per host.
    registry_urls: tuple[str, ...] = ()

    @property
    def prometheus_url(self) -> str | None:
        return next((f"http://{h}:{p}" for what, h, p in self.monitoring if what == "Prometheus"), None)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{n.host}:{n.broker_port}" for n in self.nodes if n.broker_port)

    @property
    def postgres_dsn(self) -> str:
        return (f"host={self.postgres_host} port={self.postgres_port} dbname={self.postgres_db} "
                f"user={self.postgres_user} password={self.postgres_password}")

    @property
    def connect_url(self) -> str:
        return self.connect_urls[0]

    def endpoints(self) -> list[tuple[str, str, int]]:
        """(what, host, port) of everything that must listen."""
        out = []
        for n in self.nodes:
            if n.broker_port:
                out.append((f"{n.name} broker", n.host, n.broker_port))
            if n.controller_port:
                out.append((f"{n.name} controller", n.host, n.controller_port))
        for url in self.connect_urls:
            host, port = url.split("://", 1)[-1].rsplit(":", 1)
            out.append(("Connect REST", host, int(port)))
        out.append(("PostgreSQL", self.postgres_host, self.postgres_port))
        for url in self.registry_urls:
            host, port = url.split("://", 1)[-1].rsplit(":", 1)
            out.append(("schema registry", host, int(port)))
        return out + list(self.monitoring)


# The templates the inventories use for secrets (0600 files): a plain path, or one under
# the platform's run directory (the local default's generated passwords).
FILE_LOOKUP = re.compile(r"""^\{\{\s*lookup\(\s*['"](?:ansible\.builtin\.)?file['"]\s*,"""
                         r"""\s*(platform_run_dir\s*~\s*)?['"]([^'"]+)['"]\s*\)\s*\}\}$""")


class MissingSecret(FileNotFoundError):
    """A password file the inventory names does not exist (yet)."""


def resolve(value: str, run_dir: Path | None = None) -> str:
    """An inventory value as Ansible would see it, for the templates the inventories use
    for secrets: {{ lookup('ansible.builtin.file', '<path>') }} and, with run_dir,
    {{ lookup('ansible.builtin.file', platform_run_dir ~ '/<path>') }}."""
    match = FILE_LOOKUP.match(str(value).strip())
    if not match:
        return value
    if match.group(1) and run_dir is None:
        raise ValueError(f"{value}: platform_run_dir is not known here")
    path = run_dir / match.group(2).lstrip("/") if match.group(1) else Path(match.group(2))
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        raise MissingSecret(f"{path} does not exist: `make up` generates it (the inventory reads it)") from None


def inventory_path() -> Path:
    return Path(os.environ.get("PLATFORM_INVENTORY", DEFAULT_INVENTORY))


# A process that starts job processes hands them the listing it read (listing_env):
# ansible-inventory costs about 0.3 CPU-s, and make demo starts some 30 job processes.
# The listing holds what the inventory's files hold, no more (a password kept in a file
# stays a lookup until resolve()), and a process's environment is its user's to read.
LISTING_ENV = "KP_INVENTORY_LISTING"


@cache
def listing(path: Path) -> str:
    """`ansible-inventory --list` of the inventory at `path`, or the one this process's
    parent read from the same path."""
    inherited = os.environ.get(LISTING_ENV)
    if inherited:
        source, _, text = inherited.partition("\n")
        if source == str(path):
            return text
    # ansible-inventory sits beside this interpreter in the project's .venv.
    tool = Path(sys.executable).parent / "ansible-inventory"
    return subprocess.run([str(tool), "-i", str(path), "--list"], check=True, capture_output=True,
                          text=True, env={**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible" / "ansible.cfg")}).stdout


def listing_env() -> dict[str, str]:
    """The environment that hands this process's inventory listing to a child."""
    path = inventory_path()
    return {LISTING_ENV: f"{path}\n{listing(path)}"}


def _run_dir(hostvars: dict) -> Path:
    # The control machine's state of this cluster: platform_run_dir when the inventory
    # gives a plain path (the hosts topology's .run/hosts/control), else the checkout's .run.
    value = hostvars.get("platform_run_dir", "")
    return Path(value) if value and "{{" not in value else ROOT / ".run"


def run_dir(path: Path | None = None) -> Path:
    """The inventory's platform_run_dir, read without its secrets (which only exist once
    `make up` has written them)."""
    inv = json.loads(listing(path or inventory_path()))
    return _run_dir(inv["_meta"]["hostvars"][inv["postgresql"]["hosts"][0]])


@cache
def load(path: Path | None = None) -> Cluster:
    """Parse `ansible-inventory --list` (inventory variables, not role defaults)."""
    path = path or inventory_path()
    inv = json.loads(listing(path))
    hostvars = inv["_meta"]["hostvars"]

    def members(group: str) -> list[str]:
        return inv.get(group, {}).get("hosts", [])

    controllers, brokers = set(members("kafka_controllers")), members("kafka_brokers")
    names = brokers + sorted(controllers - set(brokers))
    nodes = []
    for name in names:
        v = hostvars[name]
        roles = tuple(r for r, g in (("broker", name in brokers), ("controller", name in controllers)) if g)
        nodes.append(Node(name, int(v["kafka_node_id"]), v.get("ansible_host", name),
                          int(v.get("kafka_broker_port", 9092)) if "broker" in roles else None,
                          int(v.get("kafka_controller_port", 9093)) if "controller" in roles else None,
                          v.get("kafka_rack", ""), roles,
                          int(v.get("kafka_replication_port", 9091)) if "broker" in roles else None))
    # The REST API is HTTPS only (role kafka_connect), with Basic authentication (kafka_patterns.clients.connect).
    connect = tuple(f"https://{hostvars[h].get('ansible_host', h)}:{hostvars[h].get('connect_rest_port', 8083)}"
                    for h in members("kafka_connect"))
    # HTTPS only, with Basic authentication (kafka_patterns.clients.registry); role schema_registry's defaults.
    registry = tuple(f"https://{hostvars[h].get('registry_host', hostvars[h].get('ansible_host', h))}:"
                     f"{hostvars[h].get('registry_port', 8081)}" for h in members("schema_registry"))
    pg = hostvars[members("postgresql")[0]]
    run_dir = _run_dir(pg)
    # Role monitoring's defaults where the inventory leaves them out.
    monitoring = tuple(
        (what, hostvars[h].get(f"{key}_host", "127.0.0.1"), int(hostvars[h].get(f"{key}_{port_key}", port)))
        for h in members("monitoring")[:1]
        for what, key, port_key, port in (("Prometheus", "prometheus", "port", 9090),
                                          ("canary", "canary", "metrics_port", 9464),
                                          ("lag exporter", "lag_exporter", "metrics_port", 9465)))
    app_password = resolve(pg["postgresql_app_password"], run_dir)
    replication_password = resolve(pg.get("postgresql_replication_password", ""), run_dir)
    return Cluster(tuple(nodes), connect, pg.get("ansible_host", "127.0.0.1"), int(pg.get("postgresql_port", 5432)),
                   pg["postgresql_database"], pg["postgresql_app_user"], app_password,
                   run_dir, pg.get("postgresql_replication_user", "cdc"), replication_password, monitoring, registry)


def listening(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def answering(host: str, port: int, ca_file: Path, timeout: float = 3.0) -> str:
    """'up' when a TLS listener completes a handshake within the timeout, 'hung' when
    its port accepts connections but the handshake gets no answer (a stopped or wedged
    process: the kernel still accepts), 'down' when nothing listens."""
    import ssl

    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return "down"
    context = ssl.create_default_context(cafile=str(ca_file))
    context.check_hostname = False  # the address is checked by the clients; here: is anyone home
    context.verify_mode = ssl.CERT_NONE
    try:
        with raw, context.wrap_socket(raw, server_hostname=host):
            return "up"
    except TimeoutError:
        return "hung"
    except OSError:
        # A handshake refused (e.g. a mutual-TLS listener wants a certificate) is an answer.
        return "up"


def main(argv: list[str]) -> int:
    try:
        cluster = load()
    except MissingSecret as e:  # never started here: not up
        print(e, file=sys.stderr)
        return 1
    if argv[:1] == ["bootstrap"]:
        print(cluster.bootstrap_servers)
        return 0
    if argv[:1] == ["is-up"]:
        down = [f"{what} ({host}:{port})" for what, host, port in cluster.endpoints() if not listening(host, port)]
        if down:
            print("not listening: " + ", ".join(down), file=sys.stderr)
        return 1 if down else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

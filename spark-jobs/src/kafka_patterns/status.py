"""`make status`: one readable view of the local platform.

Nodes and roles, the KRaft quorum (leader, voters, lag), topics with partitions,
replication factor and in-sync replicas, the Connect worker and its plugins,
PostgreSQL. Parts that are down are shown as down; nothing here changes state.
"""

from __future__ import annotations

import sys

import psycopg
from tabulate import tabulate

from kafka_patterns import clients, connect, credentials, inventory, kafka_tool
from kafka_patterns.catalogue import topics as catalogue_topics


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def show_nodes(cluster: inventory.Cluster) -> bool:
    section("Kafka nodes")
    rows = []
    for n in cluster.nodes:
        ports = [p for p in (n.broker_port, n.controller_port) if p]
        states = {inventory.answering(n.host, p, credentials.ca_file()) for p in ports}
        state = ("up" if states == {"up"} else "HUNG (its port accepts connections, but it does not answer)"
                 if "hung" in states else "DOWN")
        rows.append([n.name, n.node_id, "+".join(n.roles), n.rack, n.broker_port or "-", n.controller_port or "-",
                     state])
    print(tabulate(rows, headers=["node", "id", "roles", "rack", "broker", "controller", "state"]))
    return any(r[-1] == "up" for r in rows)


def show_quorum(cluster: inventory.Cluster) -> None:
    section("KRaft quorum")
    try:
        q = kafka_tool.quorum(cluster.bootstrap_servers)
    except Exception as e:
        print(f"unavailable: {e}")
        return
    print(f"leader: node {q['leader']}  epoch: {q['epoch']}  high watermark: {q['high_watermark']}")
    rows = [[r[0], r[-1], r[2], r[3]] for r in q["replication"] if len(r) >= 4]
    print(tabulate(rows, headers=["node", "status", "log end offset", "lag"]))


def show_topics() -> None:
    section("Topics")
    try:
        # The read-only catalogue user: metadata and configs, no records.
        md = clients.admin(user="operator").list_topics(timeout=10)
    except Exception as e:
        print(f"unavailable: {e}")
        return
    declared = catalogue_topics()
    rows = []
    for name in sorted(md.topics):
        parts = md.topics[name].partitions.values()
        rf = max((len(p.replicas) for p in parts), default=0)
        isr = min((len(p.isrs) for p in parts), default=0)
        under = sum(1 for p in parts if len(p.isrs) < len(p.replicas))
        leaderless = sum(1 for p in parts if p.leader < 0)
        source = "catalogue" if name in declared else ("internal" if name.startswith(("__", "connect-")) else "other")
        rows.append([name, len(parts), rf, f"{isr}/{rf}", under, leaderless, source])
    missing = sorted(set(declared) - set(md.topics))
    print(tabulate(rows, headers=["topic", "partitions", "RF", "min ISR", "under-replicated", "no leader", "from"]))
    if missing:
        print(f"declared in the catalogue but missing: {', '.join(missing)}")


def show_connect(cluster: inventory.Cluster) -> None:
    section("Kafka Connect")
    # Connect reports the last state it knew: with no broker listening, a connector's
    # RUNNING is stale (it can neither read nor write), so its state is unknown.
    kafka_up = any(inventory.listening(n.host, n.broker_port) for n in cluster.nodes if n.broker_port)
    for url in cluster.connect_urls:
        try:
            answers = {}
            for what, path in (("info", "/"), ("plugins", "/connector-plugins"),
                               ("connectors", "/connectors?expand=status")):
                r = connect.request("GET", path, base_url=url, timeout=5)
                if r.status_code != 200:
                    raise connect.ConnectAccessError(f"GET {path} answered {r.status_code} {r.reason}")
                answers[what] = r.json()
        except connect.ConnectAccessError as e:
            print(f"{url}: up, but unusable here: {e}")
            continue
        except OSError as e:  # requests' errors are OSErrors: refused, timed out, TLS
            print(f"{url}: DOWN ({e})")
            continue
        info, plugins, connectors = answers["info"], answers["plugins"], answers["connectors"]
        print(f"{url}: up, Kafka Connect {info.get('version')}, cluster {info.get('kafka_cluster_id')}")
        print(tabulate([[p["class"], p.get("type", ""), p.get("version", "")] for p in plugins],
                       headers=["plugin", "type", "version"]))
        if not connectors:
            continue
        if kafka_up:
            rows = [[n, s["status"]["connector"]["state"], ",".join(t["state"] for t in s["status"]["tasks"])]
                    for n, s in connectors.items()]
        else:
            rows = [[n, "unknown (Kafka down)", "unknown"] for n in connectors]
            print("no Kafka broker listens: the connectors' states Connect reports are stale")
        print(tabulate(rows, headers=["connector", "state", "tasks"]))


def show_postgres(cluster: inventory.Cluster) -> None:
    section("PostgreSQL")
    try:
        with psycopg.connect(cluster.postgres_dsn, connect_timeout=5) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            wal = conn.execute("SHOW wal_level").fetchone()[0]
            slots = conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0]
    except psycopg.Error as e:
        print(f"{cluster.postgres_host}:{cluster.postgres_port}: DOWN ({str(e).strip()})")
        return
    print(tabulate([[f"{cluster.postgres_host}:{cluster.postgres_port}", version, cluster.postgres_db, wal, slots]],
                   headers=["address", "version", "database", "wal_level", "replication slots"]))


def main() -> int:
    cluster = inventory.load()
    if show_nodes(cluster):
        show_quorum(cluster)
        show_topics()
    show_connect(cluster)
    show_postgres(cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())

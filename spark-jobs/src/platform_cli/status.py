"""`make status`: one readable view of the local platform.

Nodes and roles (and the Kafka release each runs), the KRaft quorum (leader, voters,
lag, the finalized metadata.version), topics with partitions, replication factor and
in-sync replicas (under-replicated partitions counted), the consumer groups' lag, the
Connect worker and its plugins, PostgreSQL, the certificates the TLS endpoints serve
(expiry), and the monitoring: Prometheus's firing alerts and the delivery canary's counts. Parts that are
down are shown as down; nothing here changes state.
"""

from __future__ import annotations

import math
import sys

import psycopg
from cryptography import x509
from tabulate import tabulate

from kafka_patterns.clients import connect, kafka, prometheus
from kafka_patterns.config import credentials, inventory
from kafka_patterns.config.catalogue import topics as catalogue_topics
from kafka_patterns.monitoring import lag_exporter
from kafka_patterns.monitoring.canary import OUTCOMES as canary_outcomes
from pattern_harness import certificates
from pattern_harness.broker_faults import running_version


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def show_nodes(cluster: inventory.Cluster) -> list[str]:
    """Print the nodes and return their states."""
    section("Kafka nodes")
    rows = []
    for n in cluster.nodes:
        ports = [p for p in (n.broker_port, n.controller_port) if p]
        states = {inventory.answering(n.host, p, credentials.ca_file()) for p in ports}
        state = ("up" if states == {"up"} else "HUNG (its port accepts connections, but it does not answer)"
                 if "hung" in states else "DOWN")
        rows.append([n.name, n.node_id, "+".join(n.roles), n.rack, n.broker_port or "-", n.controller_port or "-",
                     running_version(n) or "-", state])
    print(tabulate(rows, headers=["node", "id", "roles", "rack", "broker", "controller", "Kafka", "state"]))
    return [r[-1] for r in rows]


RAFT = "kafka_server_raftmetrics_"
# A certificate closer to its expiry than this is flagged (the roles renew within 30 days).
CERT_WARN_DAYS = 30
# The feature level each node's metadata loader holds (make upgrade ... FINALIZE=1 raises it).
METADATA_VERSION = 'kafka_server_metadataloader_finalizedlevel{featureName="metadataVersion"}'


def raft_metrics(url: str) -> dict[str, dict[str, object]]:
    """Per node, its KRaft view as Prometheus last scraped it: state, leader, epoch,
    high watermark, log end offset. (The quorum API, DescribeQuorum, needs Describe on
    the cluster, which would let the read-only view list every SCRAM user and ACL.)"""
    nodes: dict[str, dict[str, object]] = {}
    for r in prometheus.api(url, "query", query=f'{RAFT}current_state == 1')["result"]:
        nodes.setdefault(r["metric"]["node"], {})["state"] = r["metric"]["current_state"]
    for field in ("current_leader", "current_epoch", "high_watermark", "log_end_offset"):
        for r in prometheus.api(url, "query", query=f"{RAFT}{field}")["result"]:
            nodes.setdefault(r["metric"]["node"], {})[field] = int(float(r["value"][1]))
    return nodes


def show_quorum(cluster: inventory.Cluster) -> None:
    section("KRaft quorum (the nodes' raft metrics, as last scraped)")
    if cluster.prometheus_url is None:
        print("unavailable: the inventory has no monitoring host (the quorum is read from Prometheus)")
        return
    try:
        nodes = raft_metrics(cluster.prometheus_url)
    except (OSError, prometheus.PrometheusError) as e:
        print(f"unavailable: Prometheus {cluster.prometheus_url}: {e}")
        return
    leaders = [v for v in nodes.values() if v.get("state") == "leader"]
    if not leaders:
        print("no node reports itself the leader (an election, or the metrics are not scraped yet)")
    else:
        lead = leaders[0]
        print(f"leader: node {lead.get('current_leader', '?')}  epoch: {lead.get('current_epoch', '?')}  "
              f"high watermark: {lead.get('high_watermark', '?')}")
    top = max((v.get("log_end_offset", 0) for v in nodes.values()), default=0)
    rows = [[name, v.get("state", "?"), v.get("log_end_offset", "?"),
             top - v["log_end_offset"] if "log_end_offset" in v else "?"] for name, v in sorted(nodes.items())]
    print(tabulate(rows, headers=["node", "status", "log end offset", "lag"]))
    levels = {r["metric"].get("node", "?"): int(float(r["value"][1])) for r in prometheus.api(
        cluster.prometheus_url, "query", query=METADATA_VERSION)["result"]}
    print("finalized metadata.version level: " + (
        "none scraped yet" if not levels else f"{next(iter(levels.values()))} (every node)"
        if len(set(levels.values())) == 1 else ", ".join(f"{k} {v}" for k, v in sorted(levels.items()))))


def show_certificates(cluster: inventory.Cluster) -> None:
    """What each TLS endpoint serves: its subject, issuer and expiry (make rotate-certs
    issues them anew)."""
    section("Certificates (as served)")
    rows = []
    for c in certificates.served(cluster):
        cert = c.certificate
        cn = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        issuer = cert.issuer.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        left = c.days_left()
        rows.append([c.endpoint, c.address, cn[0].value if cn else "?", issuer[0].value if issuer else "?",
                     cert.not_valid_after_utc.strftime("%Y-%m-%d"),
                     f"{left:.0f}" + (" RENEW (make rotate-certs)" if left < CERT_WARN_DAYS else "")])
    if not rows:
        print("no TLS endpoint answers")
        return
    print(tabulate(rows, headers=["endpoint", "address", "subject CN", "issuer", "expires", "days left"]))


def show_topics() -> None:
    section("Topics")
    try:
        # The read-only catalogue user: metadata and configs, no records.
        md = kafka.admin(user="operator").list_topics(timeout=10)
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
    print(f"under-replicated partitions: {sum(r[4] for r in rows)}, without a leader: {sum(r[5] for r in rows)}")
    if missing:
        print(f"declared in the catalogue but missing: {', '.join(missing)}")


def show_lag() -> None:
    """Per consumer group and topic: the lag summed over the partitions it commits on
    (as the lag exporter computes it), and the group's members."""
    section("Consumer groups")
    source = lag_exporter.OffsetSource(user="operator")
    try:
        committed = {g: {tp: o for tp, o in source.committed(g).items() if o is not None} for g in source.groups()}
        ends = source.end_offsets({tp for offsets in committed.values() for tp in offsets})
    except Exception as e:  # a Partial too: a lag from half the partitions would mislead
        print(f"unavailable: {e}")
        return
    rows = []
    for group, offsets in sorted(committed.items()):
        for topic in sorted({t for t, _ in offsets}):
            mine = {tp: o for tp, o in offsets.items() if tp[0] == topic}
            # No end offset at all without a failure: the topic was deleted after the group
            # committed on it (end_offsets leaves such partitions out).
            lag = sum(max(ends[tp] - o, 0) for tp, o in mine.items() if tp in ends) \
                if any(tp in ends for tp in mine) else "topic deleted"
            rows.append([group, topic, len(mine), lag, source.members(group)])
    print(tabulate(rows, headers=["group", "topic", "partitions", "lag", "members"]) if rows
          else "no consumer group has committed offsets")


def show_monitoring(cluster: inventory.Cluster) -> None:
    """What Prometheus sees: its firing alerts, the canary's counts and latency."""
    if cluster.prometheus_url is None:
        return
    section("Monitoring")
    url = cluster.prometheus_url
    try:
        alerts = prometheus.firing(url)
        canary = {r["metric"]["__name__"]: float(r["value"][1]) for r in prometheus.api(
            url, "query", query='{__name__=~"kafka_patterns_canary_records_.*"}')["result"]}
        p99 = prometheus.instant(url, "histogram_quantile(0.99, sum by (le) "
                                     "(rate(kafka_patterns_canary_end_to_end_latency_seconds_bucket[5m])))")
    except (OSError, prometheus.PrometheusError) as e:
        print(f"Prometheus {url}: DOWN ({e})")
        return
    print(f"Prometheus {url}: up, {len(alerts)} alert(s) firing")
    for a in alerts:
        print(f"  {a['labels'].get('severity', '')}: {a['labels']['alertname']} {a['labels'].get('instance', '')}")
    counts = {k.removeprefix("kafka_patterns_canary_records_").removesuffix("_total"): int(v)
              for k, v in canary.items()}
    latency = f", p99 latency {p99 * 1000:.0f} ms" if p99 is not None and not math.isnan(p99) else ""
    print("canary: " + (", ".join(f"{k} {counts[k]}" for k in (*canary_outcomes, "overdue") if k in counts)
                        or "no data yet")
          + latency)


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
    states = show_nodes(cluster)
    if "up" in states:
        show_quorum(cluster)
        show_topics()
    if set(states) == {"up"}:
        show_lag()
    else:  # a group whose coordinator is away would wait out every admin call
        section("Consumer groups")
        print("not read while a node is down or hung")
    show_connect(cluster)
    show_postgres(cluster)
    show_certificates(cluster)
    show_monitoring(cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())

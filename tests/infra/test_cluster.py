"""The cluster as a whole: quorum, topics with their replicas, Connect, PostgreSQL."""

from __future__ import annotations

import json
import os
import uuid

import psycopg
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import ConfigResource

from helpers import ROOT
from kafka_patterns.clients import kafka
from pattern_harness import kafka_tool
from platform_cli import status


def test_the_quorum_has_three_voters_and_a_leader(cluster):
    q = kafka_tool.quorum(cluster.bootstrap_servers)
    voters = {int(v["id"]) for v in json.loads(q["voters_raw"])}
    assert voters == {n.node_id for n in cluster.nodes if "controller" in n.roles}
    assert q["leader"] in voters
    statuses = {int(r[0]): r[-1] for r in q["replication"]}
    assert sorted(statuses.values()) == ["Follower", "Follower", "Leader"], statuses


def test_the_status_views_quorum_from_the_raft_metrics_agrees_with_the_quorum_api(cluster):
    """make status reads the quorum from Prometheus (the read-only user may not ask for it)."""
    if cluster.prometheus_url is None:
        pytest.skip("the inventory has no monitoring host")
    leader = kafka_tool.quorum(cluster.bootstrap_servers)["leader"]
    names = {n.name: n.node_id for n in cluster.nodes if "controller" in n.roles}

    def scraped():
        nodes = status.raft_metrics(cluster.prometheus_url)
        complete = set(nodes) == set(names) and all("log_end_offset" in v for v in nodes.values())
        return nodes if complete and any(v.get("state") == "leader" for v in nodes.values()) else None
    nodes = kafka.wait_until(scraped, timeout=60, interval=2, what="every controller's raft metrics in Prometheus")
    assert [names[n] for n, v in nodes.items() if v["state"] == "leader"] == [leader], nodes
    assert {v["current_leader"] for v in nodes.values()} == {leader}, nodes


def describe(names: list[str], timeout: float = 10):
    md = kafka.admin("operator").list_topics(timeout=timeout)
    return {n: md.topics[n] for n in names if n in md.topics}


def min_isr(topic: str) -> int:
    admin, res = kafka.admin("operator"), ConfigResource(ConfigResource.Type.TOPIC, topic)
    return int(admin.describe_configs([res])[res].result(timeout=10)["min.insync.replicas"].value)


def test_every_catalogue_topic_has_rf3_and_three_in_sync_replicas(cat):
    declared = {t["name"]: t for t in cat["topics"]}
    found = describe(list(declared))
    assert set(found) == set(declared), f"missing: {set(declared) - set(found)}"
    rf = cat["cluster"]["replicationFactor"]
    for name, meta in found.items():
        assert len(meta.partitions) == declared[name]["partitions"], name
        for p in meta.partitions.values():
            assert len(p.replicas) == rf, (name, p.id)
            assert len(p.isrs) == rf, (name, p.id, p.isrs)
            assert p.leader in p.replicas


def test_replicas_of_each_partition_span_the_racks(cat, cluster):
    rack = {n.node_id: n.rack for n in cluster.nodes}
    for name, meta in describe([t["name"] for t in cat["topics"]]).items():
        for p in meta.partitions.values():
            assert len({rack[r] for r in p.replicas}) == len(p.replicas), (name, p.id)


def test_internal_topics_are_replicated_like_data(cat, cluster):
    # The transaction log is created on first use: a transactional producer brings it up.
    tx = Producer({**kafka.base_config("admin"), "transactional.id": f"infra-{uuid.uuid4().hex}"})
    tx.init_transactions(30)
    rf, isr = cat["cluster"]["replicationFactor"], cat["cluster"]["minInsyncReplicas"]
    internal = ["__consumer_offsets", "__transaction_state", "connect-configs", "connect-offsets", "connect-status"]
    found = describe(internal)
    assert set(found) == set(internal), f"missing: {set(internal) - set(found)}"
    for name, meta in found.items():
        assert all(len(p.replicas) == rf and len(p.isrs) == rf for p in meta.partitions.values()), name
        assert min_isr(name) == isr, name


def test_connect_lists_the_debezium_plugins_and_no_filestream(cluster):
    from kafka_patterns.clients import connect

    classes = {p["class"] for p in connect.request("GET", "/connector-plugins").json()}
    assert {"io.debezium.connector.postgresql.PostgresConnector",
            "io.debezium.connector.jdbc.JdbcSinkConnector"} <= classes
    # FileStream would let a REST user read any file of the worker into a topic.
    assert not [c for c in classes if ".connect.file." in c]


def test_postgresql_is_ready_for_cdc(cluster):
    with psycopg.connect(cluster.postgres_dsn, connect_timeout=5) as conn:
        assert conn.execute("SHOW wal_level").fetchone()[0] == "logical"
        assert conn.execute("SELECT rolreplication FROM pg_roles WHERE rolname = 'cdc'").fetchone() == (True,)
        assert int(conn.execute("SHOW max_replication_slots").fetchone()[0]) >= 1
        # An abandoned slot (a stopped Kubernetes' Connect) cannot hold WAL back without bound.
        assert conn.execute("SHOW max_slot_wal_keep_size").fetchone()[0] == "1GB"


def test_no_service_is_held_to_fewer_cpus_than_the_tests_may_use():
    # Mitogen, the playbooks' strategy, pins the processes its modules start unless
    # ansible/plugins/strategy/mitogen_linear.py turns that off: on 2 cores the brokers,
    # Connect and the registry then shared one, and a cold make up took 270 s, not 110.
    running = {}
    for pid_file in (ROOT / ".run").rglob("*.pid"):  # every service make up started, postmaster.pid too
        pid = int(pid_file.read_text().split()[0])
        if os.path.exists(f"/proc/{pid}"):
            running[pid_file.name] = pid
    assert {"kafka-1.pid", "kafka-2.pid", "kafka-3.pid"} <= set(running), f"services found: {sorted(running)}"
    cpus = os.sched_getaffinity(0)
    held = {name: sorted(os.sched_getaffinity(pid)) for name, pid in running.items()
            if os.sched_getaffinity(pid) != cpus}
    assert not held, f"held to fewer CPUs than {sorted(cpus)}: {held}"

"""The KRaft nodes on their hosts: separate controllers and brokers, each as user
kafka on its own address, one quorum of three voters, the brokers' racks."""

from __future__ import annotations

import json
import re

import pytest
import requests
from confluent_kafka.admin import AdminClient
from hosts_topology import HOSTS_DIR, names, role_defaults, spec

from helpers import parse_properties

CONTROLLERS, BROKERS = names("kafka_controllers"), names("kafka_brokers")
# Each node also serves its JMX exporter metrics (plain HTTP, read-only) on its own address.
METRICS_PORT = role_defaults("kafka_node")["kafka_metrics_port"]
PORTS = {"controller": {9093, METRICS_PORT}, "broker": {9091, 9092, METRICS_PORT}}


def role_of(name: str) -> str:
    return "controller" if name in CONTROLLERS else "broker"


def kafka_process(host, name: str):
    # The hosts share this machine's process table: the node's own root tells its JVM apart.
    procs = [p for p in host.process.filter(comm="java")
             if "kafka.Kafka" in p.args and f"{HOSTS_DIR}/{name}/" in p.args]
    assert len(procs) == 1, f"expected one kafka.Kafka process of {name}, found {len(procs)}"
    return procs[0]


def server_properties(host, name: str) -> dict[str, str]:
    return parse_properties(host.file(kafka_process(host, name).args.split()[-1]).content_string)


def tcp_listeners(host) -> set[str]:
    return {s for s in host.socket.get_listening_sockets() if s.startswith(("tcp://", "udp://"))}


@pytest.mark.parametrize("name", CONTROLLERS + BROKERS)
def test_the_node_runs_as_user_kafka(ssh, name):
    proc = kafka_process(ssh(name), name)
    assert proc.user == "kafka", f"{name}: kafka.Kafka runs as {proc.user}"


@pytest.mark.parametrize("name", CONTROLLERS + BROKERS)
def test_the_node_listens_on_its_own_address_only(ssh, name):
    address = spec(name)["address"]
    expected = {f"tcp://{address}:{port}" for port in PORTS[role_of(name)] | {22}}
    assert tcp_listeners(ssh(name)) == expected


@pytest.mark.parametrize("name", CONTROLLERS + BROKERS)
def test_the_node_serves_its_metrics_on_its_own_address(name, hosts_up):
    url = f"http://{spec(name)['address']}:{METRICS_PORT}/metrics"
    body = requests.get(url, timeout=10).text
    # Both roles report their Raft state; only brokers have replica managers.
    assert "kafka_server_raftmetrics_current_state" in body, url
    if role_of(name) == "broker":
        assert "kafka_server_replicamanager_underreplicatedpartitions" in body, url


@pytest.mark.parametrize("name", CONTROLLERS + BROKERS)
def test_the_node_has_one_role_and_its_rack(ssh, name):
    props = server_properties(ssh(name), name)
    assert props["process.roles"] == role_of(name)
    assert props["node.id"] == str(spec(name)["node_id"])
    if role_of(name) == "broker":
        assert props["broker.rack"] == spec(name)["rack"]
        assert props["advertised.listeners"].count(spec(name)["address"]) == 2, props["advertised.listeners"]
    voters = props["controller.quorum.voters"].split(",")
    assert voters == [f"{spec(c)['node_id']}@{spec(c)['address']}:9093" for c in CONTROLLERS]


def test_the_quorum_has_the_three_controllers_as_voters_and_the_brokers_as_observers(ssh):
    name = CONTROLLERS[0]
    host, address = ssh(name), spec(name)["address"]
    args = kafka_process(host, name).args.split()
    install_dir = args[args.index("-cp") + 1].removesuffix("/libs/*")
    node_dir = args[-1].rsplit("/", 1)[0]
    # On the node, as the node (mutual TLS with its own certificate), like the playbooks.
    out = host.check_output(
        "%s org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller %s "
        "--command-config %s describe --status",
        f"{install_dir}/bin/kafka-tool", f"{address}:9093", f"{node_dir}/tls/node-client.properties")
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", out, re.M))
    voters = {v["id"] for v in json.loads(fields["CurrentVoters"])}
    observers = {o["id"] for o in json.loads(fields["CurrentObservers"])}
    assert voters == {spec(c)["node_id"] for c in CONTROLLERS}
    assert observers == {spec(b)["node_id"] for b in BROKERS}
    assert int(fields["LeaderId"]) in voters


def test_the_brokers_serve_their_racks_to_a_client_of_the_control_machine(control_dir):
    admin = AdminClient({
        "bootstrap.servers": ",".join(f"{spec(b)['address']}:9092" for b in BROKERS),
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "admin",
        "sasl.password": (control_dir / "kafka-access" / "admin.password").read_text().strip(),
        "ssl.ca.location": str(control_dir / "pki" / "ca" / "ca.crt"),
    })
    nodes = admin.describe_cluster(request_timeout=20).result(timeout=30).nodes
    found = {n.id: (n.host, n.port, n.rack) for n in nodes}
    assert found == {spec(b)["node_id"]: (spec(b)["address"], 9092, spec(b)["rack"]) for b in BROKERS}

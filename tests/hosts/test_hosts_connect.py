"""Kafka Connect on connect-1 only, as user kafka, its REST API on the host's address
over HTTPS with authentication."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from hosts_topology import HOSTS, HOSTS_DIR, names, role_defaults, spec

WORKERS = names("kafka_connect")
METRICS_PORT = role_defaults("kafka_connect")["connect_metrics_port"]


def connect_processes(host, name: str):
    return [p for p in host.process.filter(comm="java")
            if "ConnectDistributed" in p.args and f"{HOSTS_DIR}/{name}/" in p.args]


@pytest.mark.parametrize("name", WORKERS)
def test_the_worker_runs_as_user_kafka_on_its_own_address(ssh, name):
    host = ssh(name)
    procs = connect_processes(host, name)
    assert len(procs) == 1, f"expected one Connect worker of {name}, found {len(procs)}"
    assert procs[0].user == "kafka"
    address = spec(name)["address"]
    listening = {s for s in host.socket.get_listening_sockets() if s.startswith(("tcp://", "udp://"))}
    assert listening == {f"tcp://{address}:{port}" for port in (8083, METRICS_PORT, 22)}


@pytest.mark.parametrize("name", WORKERS)
def test_the_worker_serves_its_metrics_on_its_own_address(name, hosts_up):
    url = f"http://{spec(name)['address']}:{METRICS_PORT}/metrics"
    assert "kafka_connect_worker_connector_count" in requests.get(url, timeout=10).text, url


def test_no_other_host_runs_a_worker(ssh):
    host = ssh(WORKERS[0])
    others = [h["name"] for h in HOSTS if h["name"] not in WORKERS]
    assert [n for n in others if connect_processes(host, n)] == []


@pytest.mark.parametrize("name", WORKERS)
def test_the_rest_api_wants_its_user_and_lists_the_debezium_plugins(name, control_dir, hosts_up):
    client = json.loads((control_dir / "kafka-access" / "connect.json").read_text())
    url = f"https://{spec(name)['address']}:8083/connector-plugins"
    assert requests.get(url, verify=client["ca_file"], timeout=10).status_code == 401
    password = Path(client["rest_password_file"]).read_text().strip()
    r = requests.get(url, verify=client["ca_file"], auth=(client["rest_user"], password), timeout=10)
    assert r.status_code == 200, r.text
    assert "io.debezium.connector.postgresql.PostgresConnector" in {p["class"] for p in r.json()}

"""PostgreSQL on db-1: as user postgres, on the host's address only, password logins
from its clients (Connect, the brokers, the control machine) and nobody else."""

from __future__ import annotations

import secrets
import subprocess

import pytest
from hosts_topology import HOSTS_DIR, INVENTORY, names, spec

from helpers import ROOT, VENV_BIN, ansible_env

DB = names("postgresql")[0]
ADDRESS = spec(DB)["address"]


def password(role: str) -> str:
    return (HOSTS_DIR / "secrets" / f"postgres-{role}.password").read_text().strip()


def psql(host, pw: str, user: str = "patterns"):
    return host.run(
        "PGPASSWORD=%s psql -X -tA -c 'SELECT current_user' "
        "'host=%s port=5432 dbname=patterns user=%s connect_timeout=5'", pw, ADDRESS, user)


def test_postgres_runs_as_postgres_on_its_own_address_only(ssh):
    host = ssh(DB)
    procs = [p for p in host.process.filter(comm="postgres") if f"{HOSTS_DIR}/{DB}/" in p.args]
    assert len(procs) == 1 and procs[0].user == "postgres", procs
    listening = {s for s in host.socket.get_listening_sockets() if s.startswith(("tcp://", "udp://"))}
    assert listening == {f"tcp://{ADDRESS}:5432", f"tcp://{ADDRESS}:22"}


def test_a_broker_host_logs_in_with_the_password(ssh):
    out = psql(ssh(names("kafka_brokers")[0]), password("app"))
    assert out.rc == 0 and out.stdout.strip() == "patterns", out.stderr


def test_the_password_is_required(ssh):
    out = psql(ssh(names("kafka_brokers")[0]), "not-the-password")
    assert out.rc != 0 and "password authentication failed" in out.stderr, out.stderr


@pytest.mark.parametrize("name", [names("kafka_controllers")[0], DB])
def test_a_host_that_is_no_client_is_refused(ssh, name):
    out = psql(ssh(name), password("app"))
    assert out.rc != 0 and "no pg_hba.conf entry" in out.stderr, out.stderr


@pytest.mark.slow
def test_a_password_changed_in_the_inventory_is_applied(ssh):
    """The inventory reads the password from its secrets file: a new one there is the
    role's on the next run (and the old one stops working); then the old one is back."""
    secret = HOSTS_DIR / "secrets" / "postgres-app.password"
    old, new = secret.read_text(), "changed" + secrets.token_hex(12)
    broker = ssh(names("kafka_brokers")[0])
    try:
        secret.write_text(new + "\n")
        site(DB)
        assert psql(broker, new).rc == 0
        assert "password authentication failed" in psql(broker, old.strip()).stderr
    finally:
        secret.write_text(old)
        site(DB)
    assert psql(broker, old.strip()).rc == 0


def site(limit: str) -> None:
    result = subprocess.run(
        [str(VENV_BIN / "ansible-playbook"), "-i", str(INVENTORY), "--limit", limit,
         str(ROOT / "ansible" / "playbooks" / "site.yml")],
        capture_output=True, text=True, timeout=600, env=ansible_env(), cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]

"""Each test host: its own address, reached over SSH with the project key only, and
nothing beyond the bridge."""

from __future__ import annotations

import subprocess

import pytest
from hosts_topology import CONTROL_ADDRESS, HOSTS, INVENTORY, NETNS_PREFIX

ALL = [h["name"] for h in HOSTS]


@pytest.mark.parametrize("name", ALL)
def test_the_host_is_reached_over_ssh_at_its_own_address(ssh, name):
    host = ssh(name)
    address = next(h["address"] for h in HOSTS if h["name"] == name)
    assert host.ansible.get_variables()["ansible_host"] == address
    # The session comes from the control machine's bridge address to the host's own.
    conn = host.check_output("echo $SSH_CONNECTION").split()
    assert conn[0] == CONTROL_ADDRESS and conn[2] == address, conn
    addresses = host.check_output("ip -4 -o addr show scope global | awk '{print $4}'").split()
    assert addresses == [f"{address}/24"], addresses
    assert host.check_output("ip netns identify $$") == f"{NETNS_PREFIX}{name}"


@pytest.mark.parametrize("name", ALL)
def test_the_host_has_no_way_out_of_the_bridge(ssh, name):
    host = ssh(name)
    assert "default" not in host.check_output("ip route show")
    # Asks the routing table only: nothing is sent.
    out = host.run("ip route get 192.0.2.1")
    assert out.rc != 0 and "unreachable" in out.stderr, (out.stdout, out.stderr)


def test_only_the_project_key_logs_in(hosts_up):
    address = HOSTS[0]["address"]
    known_hosts = INVENTORY.parent / "ssh" / "known_hosts"
    out = subprocess.run(
        ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityFile=/dev/null",
         "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=5",
         f"root@{address}", "true"],
        capture_output=True, text=True, timeout=30)
    assert out.returncode == 255 and "Permission denied (publickey)" in out.stderr, out.stderr

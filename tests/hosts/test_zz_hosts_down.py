"""`make hosts-down` leaves nothing: no namespace, no veth, no bridge, no process of a
test host. Runs last (file order), and only when `make test-hosts` started the hosts
itself (KP_HOSTS_STARTED_BY_TEST=yes): hosts someone brought up are left up."""

from __future__ import annotations

import os
import subprocess

import pytest
from hosts_topology import CONTROL_ADDRESS, DEFAULTS, HOSTS_DIR, NETNS_PREFIX

from helpers import ROOT


@pytest.mark.slow
def test_hosts_down_leaves_no_namespace_and_no_process(hosts_up):
    if os.environ.get("KP_HOSTS_STARTED_BY_TEST") != "yes":
        pytest.skip("the test hosts were up before the tests: `make test-hosts` takes down only hosts it started")
    # -o setup: the tests run in the project's .venv, so setup is done.
    done = subprocess.run(["make", "-C", str(ROOT), "-o", "setup", "hosts-down"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert [ns for ns in namespaces.split() if ns.startswith(NETNS_PREFIX)] == []
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    assert DEFAULTS["netns_hosts_bridge"] not in links
    assert f": {DEFAULTS['netns_hosts_veth_prefix']}" not in links
    # Every service of a host names its root: sshd (its config), the JVMs, PostgreSQL.
    ps = subprocess.run(["ps", "-eo", "pid,user,args"], capture_output=True, text=True, check=True).stdout
    left = [line for line in ps.splitlines() if f"{HOSTS_DIR}/" in line and "ps -eo" not in line]
    assert left == [], "\n".join(left)
    # The monitoring ran on this machine, on the bridge address: nothing listens there now.
    listening = subprocess.run(["ss", "-H", "-t", "-l", "-n", "-p"], capture_output=True, text=True, check=True).stdout
    assert [line for line in listening.splitlines() if f" {CONTROL_ADDRESS}:" in line] == []

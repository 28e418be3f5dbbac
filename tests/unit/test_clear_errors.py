"""Each failure a user can hit during `make setup` / `make up` names what to fix.

These run the real playbooks against the local inventory with one thing broken,
and assert on what the user would read. None needs the cluster to be up.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from helpers import run_playbook

pytestmark = pytest.mark.slow


def test_a_busy_port_names_the_port_and_its_holder():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_playbook("site.yml", "--limit", "connect-1", "-e", f"connect_rest_port={port}")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"Port {port} (Connect REST API of kafka-connect-connect-1) is already in use by" in out
    assert f"pid={os.getpid()}" in out, "the message names the holding process"


def test_a_port_in_the_ephemeral_range_is_refused_with_both_fixes():
    # A port the kernel just handed out for a connection: free now, inside the range.
    with socket.create_server(("127.0.0.1", 0)) as listener, \
            socket.create_connection(listener.getsockname()) as client:
        port = client.getsockname()[1]
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    result = run_playbook("site.yml", "--limit", "connect-1", "-e", f"connect_rest_port={port}")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert (f"Port {port} (Connect REST API of kafka-connect-connect-1) lies in this host's "
            f"ephemeral port range {low}-{high}") in out
    assert "in the inventory, or reserve this one" in out
    assert f"net.ipv4.ip_local_reserved_ports={port}" in out


def fake_java(tmp_path, version: str):
    java = tmp_path / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2021-01-19\' >&2\n')
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return java


@pytest.mark.parametrize(("java", "says"), [
    ("missing", 'was not found'),
    ("11.0.2", "is Java 11"),
])
def test_java_missing_or_too_old_names_the_package(tmp_path, java, says):
    path = tmp_path / "no-such-java" if java == "missing" else fake_java(tmp_path, java)
    # kafka-2, not kafka-1: the bridge play runs on the inventory's first host, and this
    # test, run without a cluster, would leave the project bridge behind.
    result = run_playbook("site.yml", "--limit", "kafka-2", "-e", f"java_executable={path}", "-e", "java_install=false")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert says in out
    assert "apt-get install openjdk-17-jre-headless" in out


def test_maven_central_unreachable_names_the_artifact(tmp_path):
    # A fresh machine (empty Maven repository) whose repository does not answer.
    result = run_playbook("setup.yml", "--tags", "artifacts",
                          "-e", "maven_repository_url=http://127.0.0.1:9/maven2",
                          "-e", f"artifact_cache_dir={tmp_path}/cache", "-e", f"maven_local_repo={tmp_path}/m2")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Could not download org.apache." in out, "names the artifact (group:artifact:version)"
    assert "from http://127.0.0.1:9/maven2: Connection refused" in out
    assert "set maven_repository_url" in out

"""Faults of Kafka nodes, on the local default or on the hosts topology (network
namespaces kp-<host>, see role netns_hosts): kill -9, SIGSTOP/SIGCONT, a network
partition (the host's link down), a start through the node's control script.

Nodes are found by their command line (kafka.Kafka .../<inventory host>/server.properties):
the namespaces share this machine's process table, so this works for both.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from kafka_patterns.clients import kafka
from kafka_patterns.config import inventory
from pattern_harness import kafka_tool

NETNS_PREFIX = "kp-"


class FaultUnsupported(RuntimeError):
    """This inventory cannot have that fault (e.g. a partition on loopback)."""


def node_pid(node: inventory.Node) -> int | None:
    needle = f"/{node.name}/server.properties"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "kafka.Kafka" in cmdline and needle in cmdline:
            return int(entry.name)
    return None


def running_version(node: inventory.Node) -> str | None:
    """The Kafka version the node's process runs, read from its classpath (kafka_install_dir
    is versioned: .../kafka-<v>/libs); None when no process of the node runs here."""
    pid = node_pid(node)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") if pid else ""
    except OSError:  # it ended meanwhile
        return None
    return next(iter(re.findall(r"kafka-(\d+\.\d+\.\d+[^/]*)/libs", cmdline)), None)


def signal_node(node: inventory.Node, sig: signal.Signals) -> int:
    pid = node_pid(node)
    if pid is None:
        raise RuntimeError(f"no running Kafka process for {node.name}")
    os.kill(pid, sig)
    return pid


def kill9(node: inventory.Node) -> None:
    pid = signal_node(node, signal.SIGKILL)
    kafka.wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout=30, what=f"{node.name} to die")


def pause(node: inventory.Node) -> None:
    signal_node(node, signal.SIGSTOP)


def resume(node: inventory.Node) -> None:
    signal_node(node, signal.SIGCONT)


def netns(node: inventory.Node) -> str:
    name = NETNS_PREFIX + node.name
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    if name not in {line.split()[0] for line in listed.splitlines() if line.strip()}:
        raise FaultUnsupported(f"{node.name} is no network namespace of the hosts topology (make hosts-up): "
                               "a network partition needs a host with a link of its own")
    return name


def partition(node: inventory.Node) -> None:
    """Cut the host off: its only link (eth0 in its namespace) goes down."""
    subprocess.run(["ip", "netns", "exec", netns(node), "ip", "link", "set", "eth0", "down"], check=True)


def heal(node: inventory.Node) -> None:
    subprocess.run(["ip", "netns", "exec", netns(node), "ip", "link", "set", "eth0", "up"], check=True)


def start(node: inventory.Node, timeout: float = 180) -> None:
    """Start a stopped node with its control script, on its host (over SSH on the hosts
    topology), then wait until its listeners answer."""
    tool = Path(sys.executable).parent / "ansible"
    script = "{{ service_bin_dir | default('/usr/local/bin') }}/kafka-{{ kafka_node_id }} start"
    out = subprocess.run([str(tool), node.name, "-i", str(inventory.inventory_path()), "-m", "ansible.builtin.command",
                          "-a", script], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "ANSIBLE_CONFIG": str(inventory.ROOT / "ansible" / "ansible.cfg")})
    if out.returncode != 0:
        raise RuntimeError(f"could not start {node.name}: {out.stdout[-1500:]}{out.stderr[-500:]}")
    ports = [p for p in (node.broker_port, node.controller_port) if p]
    kafka.wait_until(lambda: all(inventory.listening(node.host, p) for p in ports), timeout=timeout,
                       interval=1, what=f"{node.name} to listen again")


def leader_of(topic: str, partition_id: int = 0) -> int:
    admin = kafka.admin("operator")
    meta = admin.list_topics(topic, timeout=10).topics[topic].partitions[partition_id]
    return meta.leader


def active_controller(cluster: inventory.Cluster) -> int:
    return int(kafka_tool.quorum(cluster.bootstrap_servers)["leader"])


def by_id(cluster: inventory.Cluster, node_id: int) -> inventory.Node:
    return next(n for n in cluster.nodes if n.node_id == node_id)


def under_replicated() -> int:
    md = kafka.admin("operator").list_topics(timeout=10)
    return sum(1 for m in md.topics.values() for p in m.partitions.values() if len(p.isrs) < len(p.replicas))

"""The baseline of the security-cost section: a throwaway copy of the running local
cluster with its security taken out, started for the bench and removed after it.

Each node's server.properties is the running secure node's own, with the listeners
made PLAINTEXT on other loopback ports and every TLS, SASL and authorizer key dropped;
each JVM gets the secure node's own command line (heap, GC, JIT). So the two clusters
differ only in security: same Kafka, same guarantee settings (RF 3, min ISR 2, rack
ids), same JVM. It listens on 127.0.0.1 only, holds only bench topics, and never
outlives the bench (stop() kills it and deletes its data)."""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient

from kafka_patterns.clients import kafka
from pattern_harness.kafka_tool import kafka_tool_path

# Keys of the secure config that have no place in a plain-text node: TLS, SASL, the
# authorizer, and the listener layout (rebuilt below).
SECURITY_PREFIXES = ("ssl.", "sasl.", "listener.name.", "authorizer.", "allow.everyone.", "super.users",
                     "listeners", "advertised.listeners", "listener.security.protocol.map",
                     "inter.broker.listener.name", "controller.listener.names", "controller.quorum.",
                     "log.dirs")
# Loopback ports of the baseline: node i (1-based) gets BASE_PORT + 10 * i (+1 for its
# controller), below Linux's ephemeral port range (from 32768) and the NodePorts.
BASE_PORT = 27000


@dataclass(frozen=True)
class PlainNode:
    node_id: int
    broker_port: int
    controller_port: int
    directory: Path


def read_properties(path: Path) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    return props


def plaintext_config(secure: dict[str, str], node: PlainNode, voters: str) -> dict[str, str]:
    """The secure node's settings with the security taken out and the listeners moved."""
    props = {k: v for k, v in secure.items() if not k.startswith(SECURITY_PREFIXES)}
    props.update({
        "node.id": str(node.node_id),
        "process.roles": "broker,controller",
        "listeners": f"PLAINTEXT://127.0.0.1:{node.broker_port},CONTROLLER://127.0.0.1:{node.controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.broker_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": voters,
        "log.dirs": str(node.directory / "data"),
    })
    return props


def _kafka_processes() -> list[tuple[int, list[str]]]:
    """(pid, argv) of every Kafka node JVM on this machine."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = [a for a in cmdline.read_bytes().decode(errors="replace").split("\0") if a]
        except OSError:  # the process ended while we looked
            continue
        if "kafka.Kafka" in argv:
            found.append((int(cmdline.parent.name), argv))
    return found


def jvm_command(node_config: Path) -> list[str]:
    """The running secure node's command line (the JVM as `make up` started it), for
    the node whose server.properties is `node_config`."""
    for _, argv in _kafka_processes():
        if str(node_config) in argv:
            return argv
    raise RuntimeError(f"no running Kafka node with {node_config}: start the cluster first (make up)")


def baseline_command(secure_argv: list[str], secure_config: Path, config: Path, directory: Path) -> list[str]:
    """The secure node's command line with its config and log directory swapped for the
    baseline node's, and without the JMX exporter agent: the agent would bind the secure
    node's metrics port (the baseline node exits with "Address already in use"), and
    nothing scrapes a baseline node."""
    def own(arg: str) -> str:
        if arg == str(secure_config):
            return str(config)
        if arg.startswith("-Dkafka.logs.dir="):
            return f"-Dkafka.logs.dir={directory}"
        return arg

    return [own(a) for a in secure_argv if not (a.startswith("-javaagent:") and "jmx_prometheus" in a)]


def _free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class PlaintextCluster:
    """with PlaintextCluster(run_dir) as plain: ... plain.bootstrap, plain.admin()"""

    def __init__(self, run_dir: Path, log_dir: Path):
        self.secure_configs = sorted((run_dir / "kafka").glob("*/server.properties"))
        if len(self.secure_configs) < 3:
            raise RuntimeError(f"the security baseline copies the local cluster's 3 nodes; found "
                               f"{len(self.secure_configs)} under {run_dir / 'kafka'}: run make up")
        self.root = run_dir / "bench-plaintext"
        self.log_dir = log_dir
        self.nodes = [PlainNode(i, BASE_PORT + 10 * i, BASE_PORT + 10 * i + 1, self.root / f"node-{i}")
                      for i in range(1, len(self.secure_configs) + 1)]
        self.processes: list[subprocess.Popen] = []
        self._admin: AdminClient | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.broker_port}" for n in self.nodes)

    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient({"bootstrap.servers": self.bootstrap})
        return self._admin

    def _reap_leftovers(self) -> None:
        """Nodes of a bench killed before its cleanup (their configs are under self.root)."""
        for pid, argv in _kafka_processes():
            if any(a.startswith(f"{self.root}/") for a in argv):
                os.kill(pid, signal.SIGKILL)
                kafka.wait_until(lambda pid=pid: not Path(f"/proc/{pid}").exists(), timeout=30,
                                   what=f"the end of the leftover baseline node {pid}")

    def start(self) -> None:
        self._reap_leftovers()
        busy = [p for n in self.nodes for p in (n.broker_port, n.controller_port) if not _free(p)]
        if busy:
            raise RuntimeError(f"port(s) {', '.join(map(str, busy))} on 127.0.0.1 are busy: the security baseline "
                               f"cluster needs {BASE_PORT + 10}-{BASE_PORT + 10 * len(self.nodes) + 1} "
                               "(a bench interrupted before its cleanup? see `ss -ltnp`)")
        shutil.rmtree(self.root, ignore_errors=True)
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for node, secure_path in zip(self.nodes, self.secure_configs, strict=True):
            node.directory.mkdir(parents=True)
            config = node.directory / "server.properties"
            props = plaintext_config(read_properties(secure_path), node, voters)
            config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
            fmt = subprocess.run([kafka_tool_path(), "kafka.tools.StorageTool", "format", "--cluster-id", cluster_id,
                                  "--config", str(config)], capture_output=True, text=True, timeout=120)
            if fmt.returncode != 0:
                raise RuntimeError(f"formatting the baseline node {node.node_id} failed: {fmt.stderr or fmt.stdout}")
            argv = baseline_command(jvm_command(secure_path), secure_path, config, node.directory)
            log = (self.log_dir / f"bench-plaintext-node-{node.node_id}.log").open("w")
            self.processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                   start_new_session=True, cwd=node.directory))
        kafka.wait_until(self._all_brokers_up, timeout=120, interval=0.5,
                           what=f"the {len(self.nodes)} plain-text baseline brokers (logs: {self.log_dir})")

    def _all_brokers_up(self) -> bool:
        if any(p.poll() is not None for p in self.processes):
            raise RuntimeError(f"a plain-text baseline node exited; see {self.log_dir}/bench-plaintext-node-*.log")
        # Asked only once every broker port accepts connections: a client started earlier
        # would log every refused connection.
        if any(_free(n.broker_port) for n in self.nodes):
            return False
        return len(self.admin().list_topics(timeout=10).brokers) == len(self.nodes)

    def stop(self) -> None:
        # The client first: alive, it would log every refused reconnect once the nodes are gone.
        self._admin = None
        for p in self.processes:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 60
        for p in self.processes:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.processes.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PlaintextCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

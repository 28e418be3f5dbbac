"""Recovery of the local cluster: a lost cluster id file, nodes that disagree about
their cluster, a node whose data directory was wiped, and `make status` telling a hung
node from a healthy one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid

import pytest
from confluent_kafka import TopicPartition

from helpers import ROOT, VENV_BIN, ansible_env, run_playbook
from kafka_patterns.clients import kafka
from pattern_harness import generator

RUN = ROOT / ".run"
CLUSTER_ID_FILE = RUN / "kafka" / "cluster.id"
TIMEOUT = 180


def limit_to_kafka(*more: str) -> list[str]:
    return ["--limit", "kafka_brokers:kafka_controllers", *more]


def under_replicated() -> list[str]:
    md = kafka.admin("operator").list_topics(timeout=10)
    return [f"{t}/{p.id}" for t, m in md.topics.items() for p in m.partitions.values()
            if len(p.isrs) < len(p.replicas)]


def wait_fully_replicated(what: str) -> None:
    kafka.wait_until(lambda: not under_replicated(), timeout=TIMEOUT, interval=2, what=what)


@pytest.mark.slow
def test_a_lost_cluster_id_file_is_recovered_from_the_nodes_meta_properties(cluster):
    kept = CLUSTER_ID_FILE.read_text()
    CLUSTER_ID_FILE.unlink()
    try:
        result = run_playbook("site.yml", *limit_to_kafka())
        assert result.returncode == 0, result.stdout[-3000:]
        assert "recovered cluster id" in result.stdout
        assert CLUSTER_ID_FILE.read_text() == kept
    finally:
        if not CLUSTER_ID_FILE.exists():
            CLUSTER_ID_FILE.write_text(kept)


def test_nodes_formatted_for_different_clusters_are_refused_with_the_fix(tmp_path):
    """The role's own tasks on a scratch inventory: three nodes whose meta.properties
    disagree, no cluster id file. Nothing may be written; the message names the fix."""
    ids = {"node-a": "AAAAAAAAAAAAAAAAAAAAAA", "node-b": "AAAAAAAAAAAAAAAAAAAAAA", "node-c": "BBBBBBBBBBBBBBBBBBBBBB"}
    for name, cluster_id in ids.items():
        data = tmp_path / name / "data"
        data.mkdir(parents=True)
        (data / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={cluster_id}\n")
    inventory = {"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "children": {"kafka_controllers": {"hosts": {n: {} for n in ids}}}}}
    (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
    playbook = tmp_path / "cluster-id.yml"
    playbook.write_text(json.dumps([{
        "hosts": "kafka_controllers", "gather_facts": False,
        "vars": {"kafka_cluster_id_file": str(tmp_path / "cluster.id"),
                 "kafka_log_dirs": [str(tmp_path) + "/{{ inventory_hostname }}/data"], "kafka_node_tool": "false"},
        "tasks": [{"ansible.builtin.include_role": {"name": "kafka_node", "tasks_from": "cluster_id"}}]}]))
    result = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(tmp_path / "hosts.yml"), str(playbook)],
                            capture_output=True, text=True, timeout=120, env=ansible_env(), cwd=ROOT / "ansible")
    assert result.returncode != 0
    assert "belong to different clusters" in result.stdout
    assert "node-c=BBBBBBBBBBBBBBBBBBBBBB" in result.stdout
    assert f"echo <id> > {tmp_path / 'cluster.id'}" in result.stdout
    assert not (tmp_path / "cluster.id").exists(), "a cluster id was written although the nodes disagree"


@pytest.mark.slow
def test_a_node_whose_data_was_wiped_rejoins_and_re_replicates(cluster):
    node = cluster.nodes[-1]
    topic = "smoke.records"
    run = uuid.uuid4().hex[:12]
    produced = generator.produce(topic, 2_000, run=run)
    assert len(produced.acked) == 2_000
    control = RUN / "bin" / f"kafka-{node.node_id}"
    data = RUN / "kafka" / node.name / "data"
    subprocess.run([str(control), "stop"], check=True, timeout=120)
    shutil.rmtree(data)
    result = run_playbook("site.yml", *limit_to_kafka())
    assert result.returncode == 0, result.stdout[-3000:]
    wait_fully_replicated(f"{node.name} to rejoin every ISR after its data was wiped")
    # Its copy of the topic is back on its disk, up to the records written before the wipe.
    md = kafka.admin("operator").list_topics(topic, timeout=10).topics[topic]
    mine = [p.id for p in md.partitions.values() if node.node_id in p.replicas]
    assert mine and all((data / f"{topic}-{p}").is_dir() for p in mine)
    consumer = kafka.consumer(f"verify-{run}")
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in mine}
    finally:
        consumer.close()
    assert sum(ends.values()) > 0


def status_lines() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "spark-jobs" / "src")}
    out = subprocess.run([sys.executable, "-m", "platform_cli.status"], capture_output=True, text=True,
                         timeout=120, env=env, check=True).stdout
    nodes = out.split("== Kafka nodes", 1)[1].split("\n== ", 1)[0]  # the quorum rows start with kafka- too
    return {line.split()[0]: line for line in nodes.splitlines() if line.startswith("kafka-")}


@pytest.mark.slow
def test_status_tells_a_hung_node_from_a_healthy_one(cluster):
    node = cluster.nodes[-1]
    pid = int((RUN / "kafka" / node.name / f"{node.name}.pid").read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        lines = status_lines()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "HUNG" in lines[node.name], lines[node.name]
    for other in cluster.nodes[:-1]:
        assert lines[other.name].rstrip().endswith("up"), lines[other.name]
    wait_fully_replicated(f"{node.name} to catch up after SIGCONT")
    assert status_lines()[node.name].rstrip().endswith("up")


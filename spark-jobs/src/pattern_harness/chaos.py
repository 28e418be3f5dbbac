"""Broker fault scenarios judged by Kafka's own VerifiableProducer and VerifiableConsumer.

Each run: a fresh topic chaos.<scenario>.<run> (RF 3, min.insync.replicas 2), the
producer writing acks=all with idempotence at a fixed rate, the fault injected once
the writes flow, the cluster restored, the producer stopped once at least `records`
were acknowledged after the restore, then the whole topic read back. Result: acked,
lost (must be 0), duplicated, the longest produce stall and the time from the fault
to the end of that stall.

    python -m pattern_harness.chaos report    # the table of the recorded runs
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from confluent_kafka.admin import NewTopic
from prometheus_client.parser import text_string_to_metric_families
from tabulate import tabulate

from kafka_patterns.clients import kafka
from kafka_patterns.config import inventory
from kafka_patterns.config.catalogue import ROOT, versions
from kafka_patterns.monitoring import canary
from pattern_harness import broker_faults, certificates, kafka_tool, verifiable

RESULTS = ROOT / ".run" / "chaos" / "results.jsonl"
LOGS = ROOT / ".run" / "logs" / "chaos"
PREFIX = "chaos."
PARTITIONS = 6
RATE = 3_000
HOLD_SECONDS = 30


@dataclass
class Result:
    scenario: str
    run: str
    inventory: str
    acked: int
    lost: int
    duplicated: int
    failed_sends: int
    longest_stall_s: float
    recovered_after_s: float
    notes: str = ""
    # The canary's counts over the run (acked, lost, duplicated, ...); empty without one.
    canary: dict[str, int] | None = None


# The runs of this process, for a summary at its end (the test tier prints it).
THIS_PROCESS: list[Result] = []


def create_topic(name: str) -> None:
    admin = kafka.admin()
    (future,) = admin.create_topics([NewTopic(name, PARTITIONS, 3, config={"min.insync.replicas": "2"})]).values()
    future.result(timeout=60)
    kafka.wait_until(lambda: all(p.leader >= 0 for p in admin.list_topics(name, timeout=10).topics[name]
                                   .partitions.values()), timeout=60, what=f"leaders of {name}")


def delete_topic(name: str) -> None:
    admin = kafka.admin()
    for future in admin.delete_topics([name], operation_timeout=60).values():
        future.result(timeout=90)


def hold(seconds: float) -> None:
    """The fault's duration (part of the scenario, not a wait for a condition)."""
    time.sleep(seconds)


# --- the faults: each injects, and returns how to restore -----------------------------

Restore = Callable[[], None]


def kill_partition_leader(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    node = broker_faults.by_id(cluster, broker_faults.leader_of(topic))
    t = time.monotonic()
    broker_faults.kill9(node)
    # The remaining replicas take over: writes go on without the node, then it returns.
    kafka.wait_until(lambda: producer.acks_since(t) >= RATE, timeout=120, what="acks without the killed leader")
    return lambda: broker_faults.start(node)


def stop_partition_leader(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    node = broker_faults.by_id(cluster, broker_faults.leader_of(topic))
    broker_faults.pause(node)
    hold(HOLD_SECONDS)
    return lambda: broker_faults.resume(node)


def partition_leader(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    node = broker_faults.by_id(cluster, broker_faults.leader_of(topic))
    broker_faults.partition(node)
    hold(HOLD_SECONDS)
    return lambda: broker_faults.heal(node)


def kill_active_controller(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    node = broker_faults.by_id(cluster, broker_faults.active_controller(cluster))
    broker_faults.kill9(node)
    kafka.wait_until(lambda: broker_faults.active_controller(cluster) not in (node.node_id, -1), timeout=120,
                       interval=1, what="a new active controller")
    return lambda: broker_faults.start(node)


class PlaybookFailed(RuntimeError):
    def __init__(self, what: str, log: Path) -> None:
        super().__init__(f"{what} failed; its log: {log}")
        self.log = log


def playbook(name: str, *extra: str) -> None:
    """Run ansible/playbooks/<name> on the current inventory, its output in LOGS."""
    tool = Path(sys.executable).parent / "ansible-playbook"
    log = LOGS / f"{name.removesuffix('.yml')}-{time.strftime('%Y%m%dT%H%M%S')}.log"
    with open(log, "w") as out:
        rc = subprocess.run([str(tool), "-i", str(inventory.inventory_path()),
                             str(ROOT / "ansible" / "playbooks" / name), *extra], stdout=out,
                            stderr=subprocess.STDOUT, timeout=1800, check=False,
                            env={**os.environ,
                                 "ANSIBLE_CONFIG": str(ROOT / "ansible" / "ansible.cfg")}).returncode
    if rc:
        raise PlaybookFailed(f"{name} {' '.join(extra)}", log)


def rolling_restart(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    playbook("restart.yml")
    return lambda: None


def rotate_certificates(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    """make rotate-certs: every endpoint serves a new certificate afterwards."""
    before = {c.address: c.pem for c in certificates.served(cluster)}
    playbook("rotate-certs.yml", "-e", "platform_reissue_certificates=true")
    after = {c.address: c.pem for c in certificates.served(cluster)}
    unchanged = sorted(a for a in before if after.get(a) == before[a])
    if unchanged:
        raise RuntimeError(f"after make rotate-certs these still serve their old certificate: {unchanged}")
    return lambda: None


def node_versions(cluster: inventory.Cluster) -> dict[str, str]:
    return {n.name: broker_faults.running_version(n) or "not running" for n in cluster.nodes}


def upgrade_to(cluster: inventory.Cluster, version: str, metadata: str) -> None:
    """make upgrade KAFKA_VERSION=<version> without finalizing: every node on it after, the
    finalized metadata.version still `metadata`."""
    playbook("upgrade.yml", "-e", f"kafka_version={version}")
    running = node_versions(cluster)
    if set(running.values()) != {version}:
        raise RuntimeError(f"after the upgrade to {version} the nodes run {running}")
    now = kafka_tool.features(cluster.bootstrap_servers)["metadata.version"]["finalized"]
    if now != metadata:
        raise RuntimeError(f"the upgrade to {version} moved metadata.version from {metadata} to {now}")


def upgrade_and_back(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    """To kafka_upgrade_test_version and, not finalized, back to kafka_version: both rolls."""
    pins = versions()
    metadata = kafka_tool.features(cluster.bootstrap_servers)["metadata.version"]["finalized"]
    upgrade_to(cluster, pins["kafka_upgrade_test_version"], metadata)
    return lambda: upgrade_to(cluster, pins["kafka_version"], metadata)


def two_brokers_down(cluster: inventory.Cluster, topic: str, producer: verifiable.ProducerRun) -> Restore:
    brokers = [n for n in cluster.nodes if n.broker_port]
    leader = broker_faults.leader_of(topic)
    down = [n for n in brokers if n.node_id != leader][:2]
    for node in down:
        broker_faults.kill9(node)
    hold(HOLD_SECONDS)

    def restore() -> None:
        for node in down:
            broker_faults.start(node)
    return restore


SCENARIOS: dict[str, Callable[[inventory.Cluster, str, verifiable.ProducerRun], Restore]] = {
    "leader kill -9": kill_partition_leader,
    "leader SIGSTOP 30 s": stop_partition_leader,
    "leader network partition 30 s": partition_leader,
    "active controller kill -9": kill_active_controller,
    "rolling restart (make restart)": rolling_restart,
    "rolling upgrade and back (make upgrade)": upgrade_and_back,
    "rolling certificate rotation (make rotate-certs)": rotate_certificates,
    "two brokers down 30 s": two_brokers_down,
}


def run(scenario: str, records: int = 100_000) -> Result:
    """One run of a scenario on the cluster of the current inventory."""
    cluster = inventory.load()
    run_id = uuid.uuid4().hex[:8]
    slug = "".join(c if c.isalnum() else "-" for c in scenario.lower()).strip("-")
    topic = f"{PREFIX}{slug[:40]}.{run_id}"
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{slug}-{run_id}.log"
    create_topic(topic)
    canary_before = canary_counts(cluster)
    producer = verifiable.start_producer(topic, -1, RATE, prefix=1, log=log)
    try:
        kafka.wait_until(lambda: len(producer.acked) >= RATE * 3, timeout=120, what="the producer's first acks")
        fault_at = time.monotonic()
        restore = SCENARIOS[scenario](cluster, topic, producer)
        restore()
        restored_at = time.monotonic()
        kafka.wait_until(lambda: producer.acks_since(restored_at) > 0 and len(producer.acked) >= records,
                           timeout=900, interval=1, what=f"{records} acknowledged records")
    finally:
        producer.proc.send_signal(signal.SIGTERM)  # the tool closes its producer: in-flight sends settle
        try:
            producer.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            producer.proc.kill()
    kafka.wait_until(lambda: broker_faults.under_replicated() == 0, timeout=300, interval=2,
                       what="every partition fully replicated again")
    acked = set(producer.acked)
    consumed = verifiable.consume_all(topic, acked, group=f"chaos-verify-{run_id}", log=log)
    acc = verifiable.account(acked, consumed.values, sum(producer.failed.values()))
    stall_end = producer.gap_ended_at
    canary_after = canary_counts(cluster)
    where = inventory.inventory_path()
    result = Result(scenario, run_id, str(where.relative_to(ROOT)) if where.is_relative_to(ROOT) else str(where),
                    acc.acked, acc.lost, acc.duplicated,
                    acc.failed_sends, round(producer.longest_gap, 2),
                    round(max(0.0, stall_end - fault_at), 2) if stall_end >= fault_at else 0.0,
                    canary={k: canary_after[k] - canary_before.get(k, 0) for k in canary_after}
                    if canary_before is not None and canary_after is not None else None)
    delete_topic(topic)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a") as f:
        f.write(json.dumps(asdict(result)) + "\n")
    THIS_PROCESS.append(result)
    return result


def canary_counts(cluster: inventory.Cluster) -> dict[str, int] | None:
    """The running canary's totals (kafka_patterns.monitoring.canary's counters), read from
    its metrics endpoint; None when the inventory runs no canary or it does not answer."""
    where = next(((h, p) for what, h, p in cluster.monitoring if what == "canary"), None)
    if where is None:
        return None
    try:
        with urllib.request.urlopen(f"http://{where[0]}:{where[1]}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    counts = dict.fromkeys(canary.OUTCOMES, 0)
    for family in text_string_to_metric_families(text):
        outcome = family.name.removeprefix(canary.PREFIX + "records_")
        if outcome in counts:
            counts[outcome] = int(sum(s.value for s in family.samples if s.name.endswith("_total")))
    return counts


def table(results: list[Result]) -> str:
    rows = []
    for name in SCENARIOS:
        mine = [r for r in results if r.scenario == name]
        if not mine:
            continue
        rows.append([name, len(mine), sum(r.acked for r in mine), sum(r.lost for r in mine),
                     sum(r.duplicated for r in mine), max(r.longest_stall_s for r in mine),
                     max(r.recovered_after_s for r in mine), canary_summary(mine)])
    return tabulate(rows, headers=["scenario", "runs", "acked", "lost", "duplicated", "longest stall s",
                                   "recovered after s (max)", "canary: acked/lost/duplicated"])


def canary_summary(results: list[Result]) -> str:
    counted = [r.canary for r in results if r.canary]
    if not counted:
        return "-"
    return "/".join(str(sum(c.get(k, 0) for c in counted)) for k in ("acked", "lost", "duplicated"))


def recorded() -> list[Result]:
    if not RESULTS.exists():
        return []
    return [Result(**json.loads(line)) for line in RESULTS.read_text().splitlines() if line.strip()]


def main(argv: list[str]) -> int:
    if argv[:1] == ["report"]:
        print(table(recorded()))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

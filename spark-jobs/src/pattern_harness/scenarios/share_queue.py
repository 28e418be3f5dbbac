"""share-group queue (KIP-932): more share consumers (separate processes) than
partitions; readings trickle into share.queue (with a few malformed ones). Measured
from PostgreSQL: every produced reading accepted (lost), accepted twice (duplicated,
counted); checks: more consumers than partitions received records, every record
delivered once (delivery count 1) and acknowledged once. With `faults`, members are
SIGKILLed or stopped mid-stream, one per fault (a short record lock, `lock_ms`,
bounds how long the records a killed member had acquired wait before they are
delivered again); then redeliveries are expected and counted instead of checked away."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue, credentials
from kafka_patterns.jobs import share_queue as sq
from pattern_harness import generator, kafka_tool
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs: the shortest
# record lock the brokers allow (group.share.min.record.lock.duration.ms, 15 s), so a
# killed member's records come back within seconds. (The session timeout cannot help:
# its broker minimum is 45 s.)
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"records": 2_000, "consumers": 4, "rate": 200, "lock_ms": 15_000}


def joined_members(group: str) -> int:
    """Members of the share group that have partitions, as Kafka's ShareGroupCommand
    describes them (confluent-kafka has no admin call for share groups yet)."""
    out = kafka_tool.run("org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server",
                         kafka.bootstrap_servers(), "--command-config", str(credentials.java_properties()),
                         "--describe", "--group", group, "--members")
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith(group)]
    # GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT
    return sum(1 for r in rows if len(r) >= 5 and r[4].isdigit() and int(r[4]) > 0)


def fail_members(procs: list[base.JobService], faults: Sequence[base.FailureMode], records: int, table: str,
                 group: str, run_id: str) -> list[str]:
    """One fault per member, one member after another, each once the group has accepted
    a further share of the records, so each goes mid-stream holding acquired records."""
    base.unsupported(faults, FAULTS, KEY)
    injected = []
    for k, mode in enumerate(faults):
        n = base.wait_for_rows(f"SELECT count(*) FROM {table} WHERE grp = %s AND record_run = %s",
                               (group, run_id), records * (k + 1) // (len(faults) + 2), 60,
                               "share consumers to make progress")
        rc = procs[k].kill(mode)
        injected.append(f"{mode.value} of consumer c{k} at {n}/{records} accepted (exit {rc})")
        base.progress(f"{KEY}: {injected[-1]}")
    return injected


@base.timed
def run(records: int = 2_000, consumers: int = 4, rate: float = 500.0, malformed: float = 0.01,
        faults: Sequence[base.FailureMode] = (), lock_ms: int | None = None) -> base.Outcome:
    job = JOBS[0]
    (topic,), table = base.input_topics(job), base.output_table(job)
    partitions = catalogue.topics()[topic].partitions
    run_id = base.new_run()
    group = f"{job}-{run_id}"  # a job's groups carry its name (its ACL)
    postgres.ensure(*sq.DDL, table=table)
    # A new share group starts at `latest` by default; this one starts a couple of
    # minutes back, so records produced while its members are still joining count too.
    try:
        sq.configure_group(group, "by_duration:PT2M", lock_ms)
    except Exception as e:
        raise RuntimeError(f"cannot configure share group {group} ({e}): share groups need Kafka 4.x brokers "
                           "with the share.version feature finalized at 1 or more (kafka-features describe)") from e
    log = base.checkpoint(job, run_id).parent / "consumers.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    procs = [base.spawn_job(job, ["--group", group, "--consumer-id", f"c{i}"], log) for i in range(consumers)]
    notes: list[str] = []
    injected: list[str] = []
    try:
        # Records produced before the members have joined pile up, and the first members
        # take them all; the run starts once every member has its partitions.
        base.progress(f"{KEY}: waiting for {consumers} share consumers to join {group}")
        kafka.wait_until(lambda: joined_members(group) >= consumers or None, 120, interval=1,
                           what=f"{consumers} members with partitions in share group {group}")
        base.progress(f"{KEY}: {consumers} share consumers in {group} on {topic} ({partitions} partitions); "
                      f"producing {records} readings at {rate:.0f}/s")
        produced: list = []
        producer = threading.Thread(target=lambda: produced.append(
            generator.produce(topic, records, rate=rate, run=run_id, malformed=malformed)))
        producer.start()
        injected = fail_members(procs, faults, records, table, group, run_id)
        producer.join()
        (out,) = produced
        acked = set(out.acked)
        base.progress(f"{KEY}: waiting for all {len(acked)} readings to be accepted")
        try:
            base.wait_for_rows(f"SELECT count(DISTINCT (record_key, record_seq)) FROM {table} "
                               "WHERE grp = %s AND record_run = %s",
                               (group, run_id), len(acked), 60 + 2 * (lock_ms or 0) / 1000,
                               "every reading to be accepted")
        except TimeoutError as e:
            notes.append(f"{e}; the consumers' {procs[-1].log_tail()}")
    finally:
        base.stop_all(procs)
    rows = postgres.query(f"SELECT record_key, record_seq, consumer, delivery_count FROM {table} "
                    "WHERE grp = %s AND record_run = %s ORDER BY id", (group, run_id))
    received = [(k, s) for k, s, _, _ in rows]
    d = account(acked, received, order="none")
    others = postgres.query(f"SELECT count(*) FROM {table} WHERE grp = %s AND record_run <> %s", (group, run_id))[0][0]
    per_consumer: dict[str, int] = {}
    for _, _, c, _ in rows:
        per_consumer[c] = per_consumer.get(c, 0) + 1
    redelivered = sum(1 for *_, n in rows if n != 1)
    notes.append(f"records per consumer {dict(sorted(per_consumer.items()))}; {out.malformed} malformed "
                 f"records rejected; {redelivered} redeliveries; {others} older readings (earlier runs) also accepted")
    checks = {f"more consumers than partitions ({partitions}) received records": len(per_consumer) > partitions,
              **base.fault_check(faults, injected)}
    if not faults:  # a failed member's unacknowledged records are redelivered: counted, not checked away
        checks["every record delivered once (delivery count 1)"] = redelivered == 0
        checks["every accepted record acknowledged once"] = d.duplicated == 0
    if len(per_consumer) <= partitions:
        notes.append("share groups hand records of one partition to several consumers; if only one consumer per "
                     "partition got records, check the brokers' share.version feature (kafka-features describe)")
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(acked), len(received), checks=checks,
                        notes=[*injected, *notes], faults=injected)

"""Patterns measured on Kubernetes, against what `make deploy` runs.

Bounded jobs (the batch pattern) run through the local scenarios themselves with
KP_JOB_RUNNER=kubernetes: each run is a one-shot SparkApplication (kube.run_once).
A streaming job cannot be run that way beside its deployed copy, which reads the
same topic into the same table; its scenario is the deployed application itself:
readings with a fresh run id go to its input at a steady rate, its driver pod is
deleted `driver_kills` times while they arrive (the operator restarts the
application, which resumes from the checkpoint on its volume), and the run's rows
in its sink are accounted like the local scenarios do: lost, duplicated, reordered.

A client job runs as a Deployment (kube.wait_for_deployment) the same way: the deployed
work queue's consumer group, one member per pod, gets a run of items while one of its
pods is deleted.

CDC is the deployed pipeline too: the release's Debezium source and JDBC sink
(KafkaConnectors) around its cdc-transform streaming application, on the host's
PostgreSQL, accounted like the local scenario (pattern_harness.scenarios.cdc).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from kafka_patterns.clients import connect, kafka, postgres
from kafka_patterns.config import names
from kafka_patterns.jobs import work_queue as wq
from pattern_harness import generator, kube_jobs
from pattern_harness.delivery import Order, account
from pattern_harness.scenarios import base, cdc
from pattern_harness.scenarios import work_queue as local_work_queue


def distinct_rows_sql(table: str) -> str:
    return f"SELECT count(DISTINCT (sensor, seq)) FROM {table} WHERE run = %s"


@base.timed
def streaming(job: str, records: int = 3_000, rate: float = 150, order: Order = "per-key",
              driver_kills: int = 0, timeout: float = 600) -> base.Outcome:
    """The deployed streaming job delivers a run of readings into its table; with
    driver_kills its driver pod is deleted that many times mid-stream."""
    topic, table = base.input_topics(job)[0], base.output_table(job)
    run_id = base.new_run()
    key = (f"{job} on kubernetes ({kube_jobs.namespace()})"
           + (f", driver deleted x{driver_kills}" if driver_kills else ""))
    base.progress(f"{key}: producing {records} readings to {topic} at {rate:.0f}/s")
    # The readings go out in driver_kills + 1 chunks; the k-th deletion lands while
    # chunk k is still arriving, so later chunks are not even produced yet: every
    # deletion is mid-stream, however long a restart takes.
    chunk = records // (driver_kills + 1)
    acked: list = []
    kills, rows_at_kills = [], []
    for k in range(driver_kills + 1):
        count = chunk if k < driver_kills else records - chunk * driver_kills
        produced: dict[str, generator.Produced] = {}
        producer = threading.Thread(target=lambda c=count, s=k * chunk, out=produced: out.setdefault(
            "out", generator.produce(topic, c, rate=rate, run=run_id, seq_start=s)), daemon=True)
        producer.start()
        if k < driver_kills:
            target = k * chunk + count // 2
            n = base.wait_for_rows(distinct_rows_sql(table), (run_id,), target, timeout,
                                   f"{job} to write {target} of the run's rows")
            pod = kube_jobs.delete_driver(job)
            rows_at_kills.append(n)
            kills.append(f"driver {pod} deleted at {n}/{records} rows")
            base.progress(f"{key}: {kills[-1]}")
        producer.join(timeout)
        if "out" not in produced:
            raise TimeoutError(f"producing {count} readings to {topic} took longer than {timeout:.0f}s")
        acked += produced["out"].acked
    # Every acked reading present once means every offset of the run was processed,
    # so a micro-batch replayed after a restart has already written its copies.
    base.wait_for_rows(distinct_rows_sql(table), (run_id,), len(acked), timeout,
                       f"{job} to write all {len(acked)} acked readings")
    received = [tuple(r) for r in
                postgres.query(f"SELECT sensor, seq FROM {table} WHERE run = %s ORDER BY id", (run_id,))]
    return base.Outcome(key, [job], account(acked, received, order=order), base.promise(job),
                        records_in=len(acked), records_out=len(received),
                        checks={f"driver deleted {driver_kills} times mid-stream": len(kills) == driver_kills
                                and all(n < len(acked) for n in rows_at_kills)},
                        notes=kills)


@base.timed
def work_queue(records: int = 3_000, rate: float = 100, timeout: float = 600) -> base.Outcome:
    """The deployed work-queue Deployment (consumer group `work-queue`, each pod a member
    named after itself) works through a run of items while one of its pods that owns
    partitions is deleted mid-stream. Its promise: nothing lost, per-key order; the
    deleted member's uncommitted batch, done again by the partition's next owner, is
    counted as duplicates."""
    job = "work-queue"
    topic, table = base.input_topics(job)[0], base.output_table(job)
    group = job  # the Deployment's: a client job's group defaults to its name
    key = f"{job} on kubernetes ({kube_jobs.namespace()}), a member pod deleted"
    members = kube_jobs.wait_for_deployment(job, timeout)
    partitions = sorted(base.end_offsets([topic])[topic])

    def held() -> dict[str, set[int]]:
        """The partitions each running member owns (its assignments log)."""
        live = set(kube_jobs.client_pods(job))
        return {w: ps for w, ps in wq.owners_at(local_work_queue.events(group), {}, datetime.now(UTC)).items()
                if w in live}

    def settled() -> dict[str, set[int]] | None:
        owned = held()
        shared = set(owned) == set(kube_jobs.client_pods(job)) and all(owned.values())
        return owned if shared and sorted(p for ps in owned.values() for p in ps) == partitions else None

    # The group first works off what the topic held before (a new Deployment starts at
    # its beginning) and shares the partitions, so that the deletion lands in this run.
    base.progress(f"{key}: {len(members)} members {members}; waiting for group {group} to catch up")
    # An empty partition has nothing to commit: only the others are waited for.
    backlog = {p: o for p, o in base.end_offsets([topic])[topic].items() if o > 0}
    if backlog:
        kafka.wait_until(lambda: base.group_caught_up(group, {topic: backlog}), timeout, interval=2,
                           what=f"group {group} to reach the end of {topic} ({backlog})")
    kafka.wait_until(settled, timeout, what=f"every member of {group} to own partitions of {topic}")
    # This run's items are told from earlier runs' in the shared table by their seqs.
    first = time.time_ns() // 1_000
    run_sql = f"FROM {table} WHERE grp = %s AND record_seq >= %s AND record_seq < %s"
    params = (group, first, first + records)
    produced: dict[str, generator.Produced] = {}
    producer = threading.Thread(target=lambda: produced.setdefault("out", generator.produce(
        topic, records, rate=rate, run=base.new_run(), seq_start=first)), daemon=True)
    base.progress(f"{key}: producing {records} work items to {topic} at {rate:.0f}/s")
    producer.start()
    done = base.wait_for_rows(f"SELECT count(DISTINCT (record_key, record_seq)) {run_sql}", params,
                              records // 3, timeout, f"{job} to work off a third of the run")
    victim, owned = next((w, ps) for w, ps in sorted(held().items()) if ps)
    deleted_at = datetime.now(UTC)
    kube_jobs.delete_pod(victim)
    base.progress(f"{key}: deleted pod {victim} (partitions {sorted(owned)}) at {done}/{records} items")
    producer.join(timeout)
    if "out" not in produced:
        raise TimeoutError(f"producing {records} items to {topic} took longer than {timeout:.0f}s")
    acked = produced["out"].acked
    base.wait_for_rows(f"SELECT count(DISTINCT (record_key, record_seq)) {run_sql}", params, len(acked), timeout,
                       f"{job} to work off all {len(acked)} acked items")
    after = kube_jobs.wait_for_deployment(job, timeout)
    received = [tuple(r) for r in postgres.query(f"SELECT record_key, record_seq {run_sql} ORDER BY id", params)]
    taken_over = postgres.query(f"SELECT count(*) {run_sql} AND worker <> %s AND kafka_partition = ANY(%s) "
                          "AND processed_at > %s", (*params, victim, sorted(owned), deleted_at))[0][0]
    return base.Outcome(key, [job], account(acked, received, order="per-key"), base.promise(job),
                        records_in=len(acked), records_out=len(received),
                        checks={"a member owning partitions deleted mid-stream": bool(owned) and done < len(acked),
                                "its partitions worked on by the other members": taken_over > 0,
                                "the Deployment replaced it": victim not in after and len(after) == len(members)},
                        notes=[f"pod {victim} deleted at {done}/{records} items; members then {after}"])


@base.timed
def cdc_pipeline(rows: int = 200, updates: int = 60, deletes: int = 40, seed: int | None = None,
                 timeout: float = 600) -> base.Outcome:
    """The deployed CDC pipeline: a run's rows are inserted into public.stations, some
    updated, some deleted; the release's Debezium source (its own replication slot)
    captures them into its Kafka, its cdc-transform application transforms them and its
    JDBC sink applies them to its replica table (the sink connector's table.name.format).
    The replica is accounted against the source like the local scenario does."""
    job = cdc.JOBS[0]
    src = base.input_topics(job)[0]
    key = f"{cdc.KEY} on kubernetes ({kube_jobs.namespace()})"
    cluster = kube_jobs.connect()
    wanted = sorted(names.k8s_name(name) for name in connect.specs())

    def running() -> dict[str, kube_jobs.Connector] | None:
        found = kube_jobs.connectors(cluster)
        return found if all(n in found and found[n].running for n in wanted) else None
    try:
        deployed = kafka.wait_until(running, timeout, interval=2, what=f"KafkaConnectors {wanted} RUNNING")
    except TimeoutError:
        found = kube_jobs.connectors(cluster)
        raise kube_jobs.KubeError(f"KafkaConnectors in {cluster.namespace} not all RUNNING after {timeout:.0f}s: "
                             + ", ".join(f"{n} {found[n].state or 'no state'} tasks {list(found[n].task_states)}"
                                         if n in found else f"{n} missing" for n in wanted)
                             + f" (kubectl describe kafkaconnector -n {cluster.namespace})") from None
    replica = next(c.config["table.name.format"] for c in deployed.values() if "table.name.format" in c.config)
    run_id = base.new_run()
    starting = base.end_offsets([src])
    events, deleted = cdc.change_stations(run_id, rows, updates, deletes, seed)
    seen = cdc.change_events(src, starting[src], run_id, events, timeout)
    base.progress(f"{key}: {seen}/{events} change events captured; the deployed {job} transforms them")
    result = cdc.compare_replica(replica, run_id, deleted, timeout)
    return base.Outcome(key, [job], result.delivery, base.promise(job), events, result.got, checks={
        f"every change event captured ({events})": seen >= events, **result.checks(),
    }, notes=[f"connectors {', '.join(f'{n} {c.state}' for n, c in sorted(deployed.items()))}; "
              f"{seen} change events of this run in {src}; {result.note(replica)}"])

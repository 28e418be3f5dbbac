"""exactly-once (Kafka transactions): the transactional copier SIGKILLed mid-stream
several times and restarted; a read_committed reader of the output sees every input
record exactly once, in per-key order."""

from __future__ import annotations

from confluent_kafka import KafkaException, TopicPartition

from kafka_patterns import catalogue, clients, generator, readings
from kafka_patterns.delivery import account
from kafka_patterns.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names


def committed_total(probe, group: str, topic: str) -> int:
    """Sum of the group's committed offsets on topic; a timed-out lookup (a busy broker,
    a coordinator moving) is retried rather than failing the scenario."""
    parts = [TopicPartition(topic, p) for p in range(catalogue.topics()[topic].partitions)]

    def lookup() -> int | None:
        try:
            return sum(max(tp.offset, 0) for tp in probe.committed(parts, timeout=10))
        except KafkaException as e:
            base.progress(f"{KEY}: committed offsets of {group} not read ({e}); retrying")
            return None
    return clients.wait_until(lookup, 60, interval=0.5, what=f"committed offsets of {group}")


def read_committed(topic: str, starting: dict[int, int], run: str, expect: int, timeout: float = 60):
    """Record ids of the run in the topic, as a read_committed consumer sees them."""
    consumer = clients.consumer(f"verify-{run}", **{"isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, p, o) for p, o in starting.items()])
    seen: list[tuple[str, int]] = []

    def drained() -> bool:
        for m in consumer.consume(500, timeout=0.5):
            if not m.error():
                r, _ = readings.parse(m.value())
                if r is not None and r.run == run:
                    seen.append(r.record_id)
        return len(seen) >= expect

    try:
        clients.wait_until(drained, timeout, interval=0, what=f"{expect} committed records in {topic}")
        # Anything beyond: a quiet extra poll shows duplicates, if there were any.
        drained()
    except TimeoutError:
        pass  # counted as lost below
    finally:
        consumer.close()
    return seen


@base.timed
def run(records: int = 6_000, kills: int = 3) -> base.Outcome:
    job = JOBS[0]
    (source,), (target,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    group = tid = f"{job}-{run_id}"  # the job's group and transactional id carry its name (its ACLs)
    start_in, start_out = base.end_offsets([source])[source], base.end_offsets([target])[target]
    base.progress(f"{KEY}: producing {records} readings to {source}")
    produced = generator.produce(source, records, run=run_id)
    # The group starts at this run's offsets, not at the topic's beginning.
    seed = clients.consumer(group)
    seed.commit(offsets=[TopicPartition(source, p, o) for p, o in start_in.items()], asynchronous=False)
    seed.close()
    base_total = sum(start_in.values())
    # Static membership: a restarted copier takes its partitions back at once.
    args = ["--group", group, "--transactional-id", tid, "--instance-id", tid, "--batch", "100"]
    notes = []
    probe = clients.consumer(group)  # reads the group's committed offsets, never joins it
    proc = None
    try:
        for k in range(kills):
            done = committed_total(probe, group, source) - base_total
            proc = base.spawn_job(job, args)
            step = (records - done) // (kills + 1 - k)
            n = clients.wait_until(lambda d=done, s=step: (c := committed_total(probe, group, source) - base_total)
                                   >= d + s and c, 60, what=f"{job} to commit {step} more")
            proc.hard_kill()
            notes.append(f"SIGKILL at {n}/{records} committed")
            base.progress(f"{KEY}: kill {k + 1}/{kills}: {notes[-1]}; restarting (same transactional.id)")
        proc = base.spawn_job(job, [*args, "--max-idle-seconds", "3"])
        proc.wait(timeout=120)
    finally:
        probe.close()
        if proc is not None and proc.alive():
            proc.hard_kill()
    seen = read_committed(target, start_out, run_id, records)
    d = account(produced.acked, seen, order="per-key")
    return base.Outcome(KEY, JOBS, d, base.promise(job), len(produced.acked), len(seen),
                        checks={f"killed {kills} times mid-stream": len(notes) == kills},
                        notes=["; ".join(notes)])

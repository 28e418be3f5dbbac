"""request-reply: N requests with correlation ids and a reply-to header; the responder
fails mid-way (SIGKILLed or stopped, once per fault) and is restarted. Every request
must get exactly one reply (matched by correlation id), with the right answer, and no
reply without a request."""

from __future__ import annotations

import json
from collections.abc import Sequence

from confluent_kafka import TopicPartition

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.jobs import request_reply
from pattern_harness.delivery import account
from pattern_harness.scenarios import base

PATTERN = catalogue.pattern_of_scenario(__name__)
KEY, JOBS = PATTERN.name, PATTERN.job_names
# What the faults tier's matrix may inject, and the size of its runs.
FAULTS = (base.FailureMode.SIGKILL, base.FailureMode.CLEAN_STOP)
FAULT_RUN = {"requests": 2_000}


@base.timed
def run(requests: int = 2_000, faults: Sequence[base.FailureMode] = (base.FailureMode.SIGKILL,)) -> base.Outcome:
    job = JOBS[0]
    base.unsupported(faults, FAULTS, KEY)
    (req_topic,), (reply_topic,) = base.input_topics(job), base.output_topics(job)
    run_id = base.new_run()
    group = f"{job}-{run_id}"  # the job's group and transactional id carry its name (its ACLs)
    base.seed_group(group, req_topic, base.end_offsets([req_topic])[req_topic])
    reply_start = base.end_offsets([reply_topic])[reply_topic]
    args = ["--group", group, "--instance-id", group, "--transactional-id", group, "--batch", "100"]
    responder = base.spawn_job(job, args)
    base.progress(f"{KEY}: sending {requests} requests to {req_topic} (reply-to {reply_topic})")
    producer = kafka.producer()
    sent: dict[str, bytes] = {}
    for i in range(requests):
        cid = f"{run_id}-{i}"
        body = json.dumps({"sensor": f"sensor-{i % 20:02d}", "celsius": i % 50 - 10}).encode()
        sent[cid] = body
        producer.produce(req_topic, key=cid, value=body,
                         headers=[("correlation-id", cid.encode()), ("reply-to", reply_topic.encode())])
    producer.flush(60)

    consumer = kafka.consumer(f"requester-{run_id}", **{"isolation.level": "read_committed"})
    consumer.assign([TopicPartition(reply_topic, p, o) for p, o in reply_start.items()])
    replies: list[tuple[str, bytes]] = []
    injected: list[str] = []

    def collect(until: int) -> bool:
        for m in consumer.consume(500, timeout=0.5):
            cid = dict(m.headers() or []).get("correlation-id", b"").decode()
            if not m.error() and cid.startswith(run_id):
                replies.append((cid, m.value()))
        return len(replies) >= until

    current = [responder]
    try:
        for k, mode in enumerate(faults):
            kafka.wait_until(lambda k=k: collect(requests * (k + 1) // (len(faults) + 2)), 90, interval=0,
                               what="more replies")
            rc = current[0].kill(mode)
            injected.append(f"{mode.value} of the responder after {len(replies)} replies (exit {rc})")
            base.progress(f"{KEY}: {injected[-1]}; restarting it")
            current[0] = base.spawn_job(job, args)
        kafka.wait_until(lambda: collect(requests), 90, interval=0, what=f"{requests} replies")
        collect(requests + 1)  # one more quiet poll: late duplicates would show here
    except TimeoutError:
        pass  # the missing replies are counted as lost
    finally:
        current[0].hard_kill()
        consumer.close()
    correct = all(request_reply.answer(sent[cid]) == value for cid, value in replies if cid in sent)
    d = account([(cid, 0) for cid in sent], [(cid, 0) for cid, _ in replies], order="none")
    return base.Outcome(KEY, JOBS, d, base.promise(job), requests, len(replies),
                        checks={"every reply answers its request": correct,
                                "no reply without a request": d.unacked == 0,
                                **base.fault_check(faults, injected)},
                        notes=injected, faults=injected)

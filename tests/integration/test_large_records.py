"""A record the broker took compressed that is larger than a produce request once
decompressed (the bad-input suite's "2 MB once decompressed", written as a careless
producer would, bad_input.INJECTING_PRODUCER). The Spark and client jobs that read
readings dead-letter it cut to size (the suite checks that); the transactional copier
sends consumed records on verbatim and must copy it, not fail its transaction on every
restart (clients.RESEND_AS_RECEIVED)."""

import hashlib

import pytest
from confluent_kafka import TopicPartition

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, credentials
from kafka_patterns.jobs import transactional_copier
from pattern_harness import bad_input, job_runs

JOB = "exactly-once-copier"
TIMEOUT = 30


@pytest.mark.slow
@one_run_at_a_time("exactly-once-kafka")
def test_the_copier_copies_a_record_larger_than_a_produce_request_once_decompressed(cluster):
    (source,), (target,) = catalogue.job(JOB).inputs, catalogue.job(JOB).output_topics
    run = job_runs.new_run()
    start_in, start_out = job_runs.end_offsets([source]), job_runs.end_offsets([target])
    big = b"x" * 2_000_000  # a few kilobytes compressed
    errors: list = []
    producer = kafka.producer(**bad_input.INJECTING_PRODUCER)
    producer.produce(source, key=run.encode(), value=big, on_delivery=lambda err, _m: err and errors.append(err))
    assert producer.flush(TIMEOUT) == 0 and not errors, f"the broker refused the compressed record: {errors}"
    group = f"{JOB}-{run}"  # the job's group and transactional id carry its name (its ACLs)
    seed = kafka.consumer(group)
    seed.commit(offsets=[TopicPartition(source, p, o) for p, o in start_in[source].items()], asynchronous=False)
    seed.close()

    with credentials.as_user(JOB):
        rc = transactional_copier.main(["--job", JOB, "--group", group, "--transactional-id", group,
                                        "--max-idle-seconds", "5"])

    assert rc == 0
    copies = [m for m in job_runs.read_records(start_out, job_runs.end_offsets([target]), timeout=TIMEOUT)
              if m.key() == run.encode()]
    assert [(len(m.value()), hashlib.sha256(m.value()).hexdigest()) for m in copies] == \
        [(len(big), hashlib.sha256(big).hexdigest())]

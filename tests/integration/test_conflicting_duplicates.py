"""Every deduplicating sink (the readings_to_postgres jobs with a unique key on run,
sensor, seq: one-to-one, total-order, the fan-out logger) fed the same reading twice and
then another version of it: the identical copy is skipped silently,
the other version is not stored but dead-lettered with the reason `conflicting
duplicate`, its own bytes and source offset, and the stored version in a header."""

import json

import pytest

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka, postgres
from kafka_patterns.config import catalogue
from kafka_patterns.runtime import dead_letters
from pattern_harness import job_runs

# The jobs whose sink stores each reading once, each with the pattern it belongs to (one
# run of a pattern at a time).
DEDUPLICATING = [pytest.param(job.name, marks=one_run_at_a_time(pattern.name), id=job.name)
                 for pattern in catalogue.patterns().values() for job in pattern.jobs
                 if job.stores_each_reading_once]
TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
TIMEOUT = 30


def reading(run: str, seq: int, temperature: float) -> bytes:
    return json.dumps({"run": run, "sensor": "sensor-01", "station": "station-1", "seq": seq,
                       "temperature": temperature, "humidity": 40.0, "ts": TS + seq}).encode()


def test_the_deduplicating_sinks_are_the_three_that_promise_it():
    assert sorted(p.values[0] for p in DEDUPLICATING) == ["fanout-logger", "one-to-one", "total-order"]


@pytest.mark.slow
@pytest.mark.parametrize("name", DEDUPLICATING)
def test_a_conflicting_version_is_dead_lettered_with_the_stored_one_and_a_copy_is_skipped(cluster, name):
    job = catalogue.job(name)
    (topic,) = job.inputs
    run = job_runs.new_run()
    starting, letters_start = job_runs.end_offsets([topic]), job_runs.end_offsets([job.deadletter_topic])
    first, other, second = reading(run, 1, 20.0), reading(run, 1, 25.0), reading(run, 2, 21.0)
    written: list[tuple[int, int]] = []  # (partition, offset) of each
    producer = kafka.producer()
    for value in (first, first, other, second):  # one key: one partition, in this order
        producer.produce(topic, key=b"sensor-01", value=value, on_delivery=lambda err, m: written.append(
            (-1, -1) if err else (m.partition(), m.offset())))
        producer.flush(TIMEOUT)
    assert len(written) == 4 and (-1, -1) not in written, written
    offsets = [offset for _, offset in written]

    job_runs.run_job(name, run, starting)

    stored = postgres.query(f"SELECT seq, temperature, kafka_offset FROM {job.table} WHERE run = %s ORDER BY seq",
                            (run,))
    assert stored == [(1, 20.0, offsets[0]), (2, 21.0, offsets[3])]
    # Other tests letter conflicts of their own on the same topic: ours are the letters
    # of the records this test wrote, named by partition and offset.
    ours = [m for m in job_runs.read_records(letters_start, job_runs.end_offsets([job.deadletter_topic]),
                                           timeout=TIMEOUT)
            if (h := dict(m.headers() or [])).get("source.topic") == topic.encode()
            and (int(h["source.partition"]), int(h["source.offset"])) in written]
    assert len(ours) == 1, f"one letter, the other version's: {[dict(m.headers()) for m in ours]}"
    letter, headers = ours[0], {k: v.decode() for k, v in ours[0].headers()}
    assert headers["reason"] == dead_letters.CONFLICTING_DUPLICATE
    assert (headers["source.offset"], headers["job"]) == (str(offsets[2]), name)
    assert letter.value() == other
    kept = json.loads(headers[dead_letters.STORED_HEADER])
    assert (kept["temperature"], kept["kafka_offset"]) == (20.0, offsets[0])

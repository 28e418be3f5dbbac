"""A Spark job checks a record's schema tag as the client jobs do (spark.parse_readings
with kafka_patterns.runtime.schema_tags, the ids resolved from the registry when the job
starts): the content filter routes correctly tagged readings, a version 2 one with its
new field included, and dead-letters with the reason a record whose tag is no id, names
a version of another schema or an id the registry does not have, or a version its
fields break."""

import json

import pytest

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka, registry
from kafka_patterns.config import catalogue
from kafka_patterns.jobs.content_filter import HEAT_TOPIC
from kafka_patterns.runtime import readings
from kafka_patterns.runtime.readings import Reading
from pattern_harness import job_runs


def hot_reading(run: str, seq: int, **extra) -> bytes:
    """A reading the content filter routes to the heat alerts."""
    r = Reading(run, f"sensor-{seq % 3:02d}", "station-1", seq, 35.0, 50.0, 1_767_225_600_000 + seq)
    return json.dumps(json.loads(r.to_json()) | extra).encode()


@pytest.mark.slow
@one_run_at_a_time("content-filter")  # runs the pattern's job on its topic
def test_a_spark_job_reads_a_v2_reading_and_dead_letters_a_bad_or_foreign_tag(cluster):
    job = catalogue.job("content-filter")
    (topic,), deadletter = job.inputs, job.deadletter_topic
    reader = registry.Registry.from_inventory("reader")
    run = job_runs.new_run()
    v1, v2, other = (registry.value_tag(n, v, reader) for n, v in (("reading", 1), ("reading", 2), ("sensor-state", 1)))
    header = registry.VALUE_ID_HEADER
    records = {  # seq: (value, headers, the reason it is refused or None)
        0: (hot_reading(run, 0, pressure=1013.25), v2, None),
        1: (hot_reading(run, 1), v1, None),
        2: (hot_reading(run, 2, pressure=1013.25), v1, "does not match reading v1 at the record: Additional "
                                                        "properties are not allowed ('pressure' was unexpected)"),
        3: (hot_reading(run, 3), other, f"schema id {registry.decode_id(other[0][1])} is sensor-state v1, "
                                        f"not reading"),
        4: (hot_reading(run, 4), [(header, registry.encode_id(2**40))],
            f"schema id {2**40} is not in the registry (as of this job's start)"),
        5: (hot_reading(run, 5), [(header, b"\x01\x02")], f"schema id header {header} is not an id"),
    }
    start = job_runs.end_offsets([topic, HEAT_TOPIC, deadletter])
    producer = kafka.producer()
    for seq, (value, headers, _) in records.items():
        producer.produce(topic, key=f"sensor-{seq % 3:02d}", value=value, headers=headers)
    assert producer.flush(30) == 0
    job_runs.run_job(job.name, run, {topic: start[topic]})

    def of_run(topic: str, letters_of: str | None = None) -> dict[int, dict[str, bytes]]:
        """This run's records in `topic` by seq; with letters_of, the dead letters of that
        job only (other jobs reading the same topic, e.g. time-semantics in a test beside
        this one, dead-letter the same bad records under their own name)."""
        out = {}
        for m in job_runs.read_records({topic: start[topic]}):
            r, _ = readings.parse(m.value())
            headers = dict(m.headers() or [])
            if r is not None and r.run == run and (letters_of is None or headers.get("job") == letters_of.encode()):
                out[r.seq] = headers
        return out

    assert set(of_run(HEAT_TOPIC)) == {seq for seq, (_, _, reason) in records.items() if reason is None}
    letters = of_run(deadletter, letters_of=job.name)
    assert {seq: h["reason"].decode() for seq, h in letters.items()} == {
        seq: reason for seq, (_, _, reason) in records.items() if reason is not None}

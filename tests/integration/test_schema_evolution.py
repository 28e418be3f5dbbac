"""Schemas that evolve safely, end to end: the registry (Apicurio, role schema_registry)
refuses a breaking version and accepts a compatible one under BACKWARD, as the
repository's own check (kafka_patterns.config.schemas) judges them; and a consumer job reads
the records of a compatible new version by the schema their tag names, while a record
that fails its schema goes to the dead-letter topic with the reason, and the job goes on."""

import copy
import json

import pytest

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka, postgres, registry
from kafka_patterns.config import catalogue, schemas
from kafka_patterns.jobs import at_most_once
from kafka_patterns.runtime import readings
from kafka_patterns.runtime.readings import Reading
from pattern_harness import job_runs

V1, V2 = schemas.declared()["reading"].versions[:2]
BREAKING = copy.deepcopy(V2)
BREAKING["required"].append("pressure")  # old records have no pressure


@pytest.fixture(scope="module")
def admin(cluster) -> registry.Registry:
    return registry.Registry.from_inventory("admin")


def test_the_registry_refuses_a_breaking_version_and_accepts_a_compatible_one(admin):
    probes = registry.Registry(admin.url, admin.user, admin.password, admin.ca_file, group="evolution-probes")
    name = f"reading-{job_runs.new_run()}"
    assert probes.register(name, 1, V1) > 0
    assert schemas.backward_breaks(V1, V2) == [] and probes.register(name, 2, V2) > 0
    assert schemas.backward_breaks(V2, BREAKING) == ["$: pressure became required"]
    with pytest.raises(registry.RegistryRefused, match=r"(?i)new required property"):
        probes.register(name, 3, BREAKING)
    assert probes.version_meta(name, 3) is None


def test_the_platforms_reading_schema_refuses_a_breaking_version_and_keeps_what_it_has(admin):
    latest = len(schemas.declared()["reading"].versions)
    with pytest.raises(registry.RegistryRefused, match=r"(?i)new required property"):
        admin.register("reading", latest + 1, BREAKING)
    assert admin.version_meta("reading", latest + 1) is None
    assert admin.schema_by_id(admin.id_of("reading", latest)) == schemas.declared()["reading"].latest


def reading(run: str, seq: int, **extra) -> bytes:
    r = Reading(run, f"sensor-{seq % 3:02d}", "station-1", seq, 20.0 + seq, 50.0, 1_767_225_600_000 + seq)
    return json.dumps(json.loads(r.to_json()) | extra).encode()


@pytest.mark.slow
@one_run_at_a_time("at-most-once")  # runs the pattern's job on its topic
def test_a_consumer_reads_a_compatible_new_version_and_dead_letters_what_fails_its_schema(admin):
    job = catalogue.job("at-most-once")
    (topic,), table, deadletter = job.inputs, job.table, job.deadletter_topic
    run = job_runs.new_run()
    v1, v2 = (registry.value_tag("reading", n, admin) for n in (1, 2))
    other = registry.value_tag("sensor-state", 1, admin)
    unknown = [(registry.VALUE_ID_HEADER, registry.encode_id(2**40))]
    records = {  # seq: (value, headers, the reason it is refused or None)
        0: (reading(run, 0), [], None),  # untagged: the reading contract alone
        1: (reading(run, 1), v1, None),
        2: (reading(run, 2, pressure=1013.25), v2, None),  # the new version: read
        3: (reading(run, 3), v2, None),  # its new field is optional
        4: (reading(run, 4, pressure=5.0), v2, "does not match reading v2 at pressure: 5.0 is less than the "
                                              "minimum of 870"),
        5: (reading(run, 5, pressure=1013.25), v1, "does not match reading v1 at the record: Additional "
                                                  "properties are not allowed ('pressure' was unexpected)"),
        6: (reading(run, 6), unknown, f"schema id {2**40} is not in the registry"),
        7: (reading(run, 7), other, f"schema id {registry.decode_id(other[0][1])} is sensor-state v1, not reading"),
    }
    start = job_runs.end_offsets([topic, deadletter])
    group = f"{job.name}-{run}"  # the job's ACL covers groups that carry its name
    job_runs.seed_group(group, topic, start[topic])
    producer = kafka.producer()
    for seq, (value, headers, _) in records.items():
        producer.produce(topic, key=f"sensor-{seq % 3:02d}", value=value, headers=headers)
    assert producer.flush(30) == 0
    postgres.ensure(at_most_once.DDL, table=table)
    job_run = job_runs.spawn_job(job.name, ["--group", group, "--max-idle-seconds", "3"])
    assert job_run.wait(timeout=120) == 0, "the job stopped on a record instead of dead-lettering it"

    delivered = {seq for (seq,) in postgres.query(f"SELECT seq FROM {table} WHERE run = %s", (run,))}
    assert delivered == {seq for seq, (_, _, reason) in records.items() if reason is None}
    letters = {}
    for m in job_runs.read_records({deadletter: start[deadletter]}):
        r, _ = readings.parse(m.value())
        if r is not None and r.run == run:
            letters[r.seq] = dict(m.headers())["reason"].decode()
    assert letters == {seq: reason for seq, (_, _, reason) in records.items() if reason is not None}

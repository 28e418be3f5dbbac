import copy

import pytest

from kafka_patterns import catalogue
from kafka_patterns.catalogue import CatalogueError


def test_the_shipped_catalogue_is_valid(cat):
    assert catalogue.validate(copy.deepcopy(cat))
    assert len(catalogue.topics(cat)) == len(cat["topics"])


def test_every_topic_meets_the_guarantee_settings(cat):
    for t in catalogue.topics(cat).values():
        assert t.replication_factor >= cat["cluster"]["minInsyncReplicas"] + 1, t.name


def test_every_job_reads_and_writes_declared_topics(cat):
    declared = set(catalogue.topics(cat))
    for job in cat["jobs"]:
        for ref in job["inputs"] + job.get("lookups", []) + job["outputs"] + [job.get("deadletter", "postgres:")]:
            assert ref.startswith("postgres:") or ref in declared, (job["name"], ref)


@pytest.mark.parametrize(
    ("mutate", "names"),
    [
        (lambda c: c["topics"][0].pop("partitions"), "topics[0]: 'partitions' is a required property"),
        (lambda c: c["topics"][1].update(partitions="six"), "topics[1].partitions"),
        (lambda c: c["cluster"].update(replicationFactor=0), "cluster.replicationFactor"),
        (lambda c: c["jobs"][0].update(engine="flink"), "jobs[0].engine"),
        (lambda c: c["jobs"][0]["promise"].update(lost="some"), "jobs[0].promise.lost"),
        (lambda c: c.update(topicz=[]), "(top): Additional properties"),
        (lambda c: c["jobs"][0].update(inputs=["no.such.topic"]), "jobs[0].inputs: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(outputs=c["jobs"][0]["inputs"]), "reads a topic it writes"),
        (lambda c: c["jobs"][0].update(deadletter="no.such.topic"), "jobs[0].deadletter: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(deadletter=c["jobs"][0]["inputs"][0]), "reads a topic it writes"),
        (lambda c: c["jobs"][0].update(lookups=["no.such.topic"]), "jobs[0].lookups: topic 'no.such.topic'"),
        (lambda c: c["topics"].append(dict(c["topics"][0])), "declared twice"),
    ],
)
def test_a_bad_catalogue_fails_naming_the_key(cat, mutate, names):
    bad = copy.deepcopy(cat)
    mutate(bad)
    with pytest.raises(CatalogueError, match=None) as err:
        catalogue.validate(bad)
    assert names in str(err.value)


def test_versions_pin_each_platform_part_once():
    v = catalogue.versions()
    for key in ("kafka_version", "spark_version", "debezium_version", "strimzi_version", "spark_operator_version"):
        assert isinstance(v[key], str) and v[key], key
    assert "pyspark" not in v["python_packages"], "pyspark follows spark_version; do not pin it twice"

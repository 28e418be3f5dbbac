"""A catalogue job's and user's Kafka ACLs, derived once for every Python caller: the
Ansible module that creates them on the local and hosts clusters (kafka_access'
kafka_users, through its module_utils link to this file) and the tests. The chart's
KafkaUser template (templates/kafka-users.yaml) is the other implementation, in Helm's
language; tests/iac/test_catalogue_resources.py and test_local_and_kubernetes_agree.py
hold the two equal, and tests/infra and tests/security prove on the running cluster that
these ACLs are the ones enforced.

An ACL is a (resource type, name, pattern type, operation) tuple in the KafkaUser's
spelling; the cluster resource has no name (None), as in a KafkaUser.

Standard library only: the module runs this file on a managed host, apart from the
checkout's packages.
"""

from __future__ import annotations

from typing import Any

Acl = tuple[str, str | None, str, str]
POSTGRES_OUTPUT = "postgres:"  # an output written to a PostgreSQL table, not a topic


def written_topics(job: dict[str, Any]) -> list[str]:
    """The topics a job writes: its outputs (not "postgres:" ones), its state changelogs
    and its dead letters."""
    topics = [o for o in job.get("outputs") or [] if not o.startswith(POSTGRES_OUTPUT)] + list(job.get("state") or [])
    return topics + ([job["deadletter"]] if job.get("deadletter") else [])


def job_acls(job: dict[str, Any]) -> set[Acl]:
    """What the catalogue promises a job (its header): Read + Describe on its inputs,
    lookups and state topics, Read on its groups (prefixed with the job's name: "<job>" or
    "<job>-<suffix>"), Write + Describe on the topics it writes, and for a transactional
    job Write + Describe on its transactional ids (prefixed with its name) and
    IdempotentWrite on the cluster."""
    acls = {("group", job["name"], "prefix", "Read")}
    # A state changelog is read back whole on start, and written.
    for topic in (job.get("inputs") or []) + (job.get("lookups") or []) + (job.get("state") or []):
        acls |= {("topic", topic, "literal", "Read"), ("topic", topic, "literal", "Describe")}
    for topic in written_topics(job):
        acls |= {("topic", topic, "literal", "Write"), ("topic", topic, "literal", "Describe")}
    if job.get("transactional"):
        acls |= {("transactionalId", job["name"], "prefix", "Write"),
                 ("transactionalId", job["name"], "prefix", "Describe"),
                 ("cluster", None, "literal", "IdempotentWrite")}
    return acls


def listed_acls(acls: list[dict[str, Any]]) -> set[Acl]:
    """ACLs listed in the KafkaUser shape (a catalogue user's `acls:`, a KafkaUser's
    spec.authorization.acls) as tuples."""
    return {(a["resource"]["type"], a["resource"].get("name"), a["resource"].get("patternType", "literal"), op)
            for a in acls for op in a["operations"]}


def replay_acls(jobs: list[dict[str, Any]]) -> set[Acl]:
    """What replaying dead letters needs (make replay-dlq writes a letter back to the topic
    it came from): Write + Describe on every input of a job with a deadletter topic."""
    inputs = {t for job in jobs if job.get("deadletter") for t in job.get("inputs") or []}
    return {("topic", t, "literal", op) for t in inputs for op in ("Write", "Describe")}


def user_acls(user: dict[str, Any], jobs: list[dict[str, Any]]) -> set[Acl]:
    """A catalogue user's ACLs: those it lists, and the replay ACLs of the jobs when it
    replays dead letters (`replaysDeadLetters`)."""
    return listed_acls(user["acls"]) | (replay_acls(jobs) if user.get("replaysDeadLetters") else set())

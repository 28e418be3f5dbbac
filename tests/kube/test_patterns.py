"""The delivery patterns measured on the local Kubernetes, as `make deploy` runs them,
with the same lost / duplicated / reordered accounting as the local tier: one-to-one
and exactly-once as the deployed streaming applications (the latter with its driver
pod deleted mid-stream), batch as one-shot runs of the scheduled application's spec,
the work queue as the deployed client job's Deployment (a member pod deleted
mid-stream), CDC as the deployed pipeline (the release's Debezium connectors around its
cdc-transform application, on the host's PostgreSQL). They run against the Kafka the
Strimzi operator reconciled (the Strimzi-mode release), each job as its KafkaUser, the
harness on the host reaching that Kafka through its nodeport listener as the harness
KafkaUser; one-to-one also runs on the host's Kafka (the bring-your-own release)."""

from __future__ import annotations

import pytest

from kafka_patterns.config import names
from pattern_harness import kube_jobs, kube_scenarios
from pattern_harness.scenarios import batch


def running(job: str) -> kube_jobs.Cluster:
    """The job's streaming application is RUNNING in the namespace the helpers point at."""
    cl = kube_jobs.connect()
    state = kube_jobs.wait_for_state(cl, names.k8s_name(job), {"RUNNING"}, timeout=600)
    assert state == "RUNNING", f"SparkApplication {job} in {cl.namespace} is {state}: run `make deploy STACK=local`"
    return cl


def report(outcome) -> None:
    print(f"\n{outcome.pattern}: in={outcome.records_in} out={outcome.records_out} lost={outcome.delivery.lost} "
          f"duplicated={outcome.delivery.duplicated} reordered={outcome.delivery.reordered} "
          f"{outcome.verdict} {outcome.seconds:.0f}s {'; '.join(outcome.notes)}")


@pytest.fixture(params=["host-kafka", "in-cluster-kafka"])
def kafka_of(request, cluster) -> str:
    """The Kafka a test runs on: the host's (the bring-your-own release) or the one the
    Strimzi operator reconciled (the Strimzi-mode release)."""
    if request.param == "in-cluster-kafka":
        request.getfixturevalue("in_cluster_kafka")
    return request.param


@pytest.mark.slow
def test_one_to_one_streaming_application_delivers_every_reading_once_in_per_key_order(kafka_of):
    running("one-to-one")
    outcome = kube_scenarios.streaming("one-to-one", records=2_000, order="per-key")
    report(outcome)
    d = outcome.delivery
    assert d.acked == 2_000
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()


@pytest.mark.slow
def test_exactly_once_streaming_application_survives_driver_deletion_without_loss_or_duplicates(cluster,
                                                                                               in_cluster_kafka):
    running("exactly-once")
    # 40 readings/s for 75 s: the deletions land while the run's readings still arrive.
    outcome = kube_scenarios.streaming("exactly-once", records=3_000, rate=40, order="none", driver_kills=2)
    report(outcome)
    d = outcome.delivery
    assert d.acked == 3_000
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert outcome.checks == {"driver deleted 2 times mid-stream": True}, outcome.notes


@pytest.mark.slow
def test_batch_runs_as_spark_applications_aggregate_every_reading_once(cluster, in_cluster_kafka, monkeypatch):
    monkeypatch.setenv("KP_JOB_RUNNER", "kubernetes")
    outcome = batch.run(records=2_000, more=1_000)
    report(outcome)
    d = outcome.delivery
    assert d.acked == 3_000
    assert (d.lost, d.duplicated) == (0, 0), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks


@pytest.mark.slow
def test_cdc_pipeline_applies_every_change_to_the_release_replica(cluster, in_cluster_kafka):
    running("cdc-transform")
    outcome = kube_scenarios.cdc_pipeline(rows=200, updates=60, deletes=40)
    report(outcome)
    d = outcome.delivery
    # The replica holds every surviving row of the run, transformed, and none deleted;
    # duplicates (events transformed twice) are its promise's to count, the upserts absorb them.
    assert d.acked == 200 - 40
    assert (d.lost, d.unacked) == (0, 0), outcome.failures()
    assert not outcome.failures(), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks


@pytest.fixture
def work_queue_members(cluster, in_cluster_kafka) -> list[str]:
    """The work-queue Deployment's pods, all ready (values-local-strimzi.yaml: two)."""
    return kube_jobs.wait_for_deployment("work-queue", timeout=600)


@pytest.mark.slow
def test_work_queue_deployment_loses_nothing_when_a_member_pod_is_deleted_mid_stream(work_queue_members):
    assert len(work_queue_members) == 2, work_queue_members
    outcome = kube_scenarios.work_queue(records=3_000, rate=100)
    report(outcome)
    d = outcome.delivery
    assert d.acked == 3_000
    # Its promise: nothing lost, per-key order; duplicates (the deleted member's
    # uncommitted batch, done again) are counted, not refused.
    assert (d.lost, d.reordered) == (0, 0), outcome.failures()
    assert not outcome.failures(), outcome.failures()
    assert all(outcome.checks.values()), outcome.checks

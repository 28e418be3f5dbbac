"""Kafka refuses whoever the secure default does not let in, on every listener:

- CLIENT (SASL_SSL, SCRAM-SHA-512; loopback on the local default) and PODS (the same on
  the project bridge): no TLS, TLS without credentials, a wrong password, an unknown
  user, a certificate of another CA;
- REPLICATION and CONTROLLER (mutual TLS): no TLS, TLS without a node certificate;
- a valid catalogue user without the ACL: produce, consume, a group join, create and
  delete a topic, alter a topic config (the unsafe min.insync.replicas=1), create an
  ACL, take over the admin's SCRAM credential.
Every case must be refused; each is one test."""

from __future__ import annotations

import socket
import ssl
import subprocess
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from helpers import first_error
from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials
from pattern_harness import kafka_tool

TIMEOUT = 30


def client_listener(cluster) -> str:
    """The first node's CLIENT listener (a client is told the others by it)."""
    return cluster.bootstrap_servers.split(",")[0]


def config_as(user: str, bootstrap: str, **more: Any) -> dict[str, Any]:
    return {**credentials.librdkafka_settings(user), "bootstrap.servers": bootstrap, "socket.timeout.ms": 10000,
            **more}


def listeners(cluster) -> dict[str, str]:
    """One address per listener kind of the first node (a combined node on the local default)."""
    node = cluster.nodes[0]
    out = {"CLIENT": f"{node.host}:{node.broker_port}"}
    if node.replication_port:
        out["REPLICATION"] = f"{node.host}:{node.replication_port}"
    controller = next(n for n in cluster.nodes if n.controller_port)
    out["CONTROLLER"] = f"{controller.host}:{controller.controller_port}"
    pods = credentials.run_dir() / "pods-access" / "bootstrap"
    if pods.exists():
        out["PODS"] = pods.read_text().strip().split(",")[0]
    return out


def tls_handshake(address: str, context: ssl.SSLContext) -> None:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=host) as tls:
        # With TLS 1.3 a missing client certificate is reported on the first read.
        tls.settimeout(10)
        tls.sendall(b"\x00\x00\x00\x00")
        tls.recv(1)


# --- authentication -----------------------------------------------------------------

@pytest.mark.parametrize("listener", ["CLIENT", "REPLICATION", "CONTROLLER", "PODS"])
def test_a_plain_text_client_is_refused(cluster, listener):
    address = listeners(cluster).get(listener)
    if address is None:
        pytest.skip(f"this inventory has no {listener} listener")
    error = first_error({"bootstrap.servers": address, "security.protocol": "PLAINTEXT", "socket.timeout.ms": 10000})
    assert error.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT), error


@pytest.mark.parametrize("listener", ["CLIENT", "PODS"])
def test_tls_without_credentials_is_refused(cluster, listener):
    address = listeners(cluster).get(listener)
    if address is None:
        pytest.skip(f"this inventory has no {listener} listener")
    error = first_error({"bootstrap.servers": address, "security.protocol": "SSL", "socket.timeout.ms": 10000,
                         "ssl.ca.location": str(credentials.ca_file())})
    assert error.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT), error


@pytest.mark.parametrize("listener", ["CLIENT", "PODS"])
def test_a_wrong_password_is_refused(cluster, listener):
    address = listeners(cluster).get(listener)
    if address is None:
        pytest.skip(f"this inventory has no {listener} listener")
    config = config_as("harness", address)
    config["sasl.password"] = "not-" + config["sasl.password"]
    assert first_error(config).code() == KafkaError._AUTHENTICATION


def test_an_unknown_user_is_refused(cluster):
    config = config_as("harness", client_listener(cluster))
    config.update({"sasl.username": f"nobody-{uuid.uuid4().hex[:8]}", "sasl.password": "x" * 32})
    assert first_error(config).code() == KafkaError._AUTHENTICATION


def test_the_admins_password_does_not_open_another_user(cluster):
    config = config_as("harness", client_listener(cluster))
    config["sasl.password"] = credentials.password("admin")
    assert first_error(config).code() == KafkaError._AUTHENTICATION


@pytest.mark.parametrize("listener", ["REPLICATION", "CONTROLLER"])
def test_a_tls_client_without_a_node_certificate_is_refused(cluster, listener):
    address = listeners(cluster).get(listener)
    if address is None:
        pytest.skip(f"this inventory has no {listener} listener")
    context = ssl.create_default_context(cafile=str(credentials.ca_file()))
    with pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError)):
        tls_handshake(address, context)


def test_a_server_certificate_is_checked_against_the_project_ca(cluster):
    context = ssl.create_default_context()  # the system's CAs, not the project's
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_handshake(client_listener(cluster), context)


# --- authorisation: a valid user without the ACL ----------------------------------------

def delivery_error(user: str, bootstrap: str, topic: str) -> KafkaError | None:
    results: list[Any] = []
    producer = Producer(config_as(user, bootstrap, acks="all", **{"message.timeout.ms": 20000}))
    producer.produce(topic, value=b"refused?", on_delivery=lambda err, msg: results.append(err))
    producer.flush(TIMEOUT)
    return results[0] if results else None


def test_a_job_may_not_produce_to_its_own_input(cluster, cat):
    job = next(j for j in cat["jobs"] if j["name"] == "one-to-one")
    error = delivery_error(job["name"], client_listener(cluster), job["inputs"][0])
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_the_read_only_operator_may_not_produce(cluster):
    error = delivery_error("operator", client_listener(cluster), "weather.readings")
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def consume_error(user: str, bootstrap: str, topic: str, group: str) -> KafkaError:
    consumer = Consumer(config_as(user, bootstrap, **{"group.id": group, "enable.auto.commit": False,
                                                      "auto.offset.reset": "earliest"}))
    try:
        consumer.subscribe([topic])

        def refused():
            msg = consumer.poll(1.0)
            return msg.error() if msg is not None and msg.error() else None

        return kafka.wait_until(refused, timeout=TIMEOUT, what=f"the refusal of {user} on {topic}")
    finally:
        consumer.close()


def test_the_dlq_user_may_not_write_dead_letters(cluster):
    # It reads them and replays them to their sources; only the jobs write letters.
    error = delivery_error("dlq", client_listener(cluster), "weather.deadletter")
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_the_dlq_user_may_not_consume_the_patterns_topics(cluster):
    error = consume_error("dlq", client_listener(cluster), "weather.readings", "dlq-reader")
    assert error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_a_job_may_not_consume_a_topic_it_has_no_acl_for(cluster):
    # one-to-one reads weather.readings; rpc.requests belongs to request-reply.
    error = consume_error("one-to-one", client_listener(cluster), "rpc.requests", "one-to-one-refusal")
    assert error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_a_job_may_not_join_another_jobs_group(cluster):
    error = consume_error("one-to-one", client_listener(cluster), "weather.readings", "work-queue")
    assert error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error


def test_the_bench_may_not_consume_the_patterns_topics(cluster):
    error = consume_error("bench", client_listener(cluster), "weather.readings", "bench-refusal")
    assert error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def admin_as(user: str, cluster) -> AdminClient:
    return AdminClient(config_as(user, client_listener(cluster)))


def refused_code(future) -> int:
    with pytest.raises(KafkaException) as refused:
        future.result(timeout=TIMEOUT)
    return refused.value.args[0].code()


def test_the_harness_may_not_create_a_topic(cluster):
    admin = admin_as("harness", cluster)
    name = f"weather.refused-{uuid.uuid4().hex[:8]}"
    (future,) = admin.create_topics([NewTopic(name, 1, 3)], request_timeout=TIMEOUT).values()
    assert refused_code(future) == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_the_harness_may_not_delete_a_topic(cluster):
    admin = admin_as("harness", cluster)
    (future,) = admin.delete_topics(["weather.readings"], request_timeout=TIMEOUT).values()
    assert refused_code(future) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "weather.readings" in admin.list_topics(timeout=TIMEOUT).topics


def test_the_bench_may_not_delete_a_patterns_topic(cluster):
    admin = admin_as("bench", cluster)
    (future,) = admin.delete_topics(["weather.readings"], request_timeout=TIMEOUT).values()
    assert refused_code(future) == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_the_harness_may_not_weaken_a_topics_durability(cluster):
    admin = admin_as("harness", cluster)
    entries = [ConfigEntry("min.insync.replicas", "1", incremental_operation=AlterConfigOpType.SET),
               ConfigEntry("unclean.leader.election.enable", "true", incremental_operation=AlterConfigOpType.SET)]
    resource = ConfigResource(ResourceType.TOPIC, "weather.readings", incremental_configs=entries)
    (future,) = admin.incremental_alter_configs([resource]).values()
    assert refused_code(future) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    operator = admin_as("operator", cluster)  # kept referenced until the result is in
    (configs,) = operator.describe_configs([ConfigResource(ResourceType.TOPIC, "weather.readings")]).values()
    assert configs.result(timeout=TIMEOUT)["min.insync.replicas"].value == "2"


def test_a_user_may_not_grant_itself_an_acl(cluster):
    admin = admin_as("harness", cluster)
    binding = AclBinding(ResourceType.TOPIC, "*", ResourcePatternType.LITERAL, "User:harness", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    (future,) = admin.create_acls([binding], request_timeout=TIMEOUT).values()
    assert refused_code(future) == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_a_user_may_not_take_over_the_admins_password(cluster):
    # (Listing the SCRAM users is refused the same way, but confluent-kafka 2.16 crashes
    # the process on that refusal, so the alter call stands for both.)
    admin = admin_as("harness", cluster)
    upsert = UserScramCredentialUpsertion("admin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          b"taken-over-" + uuid.uuid4().hex.encode())
    (future,) = admin.alter_user_scram_credentials([upsert], request_timeout=TIMEOUT).values()
    assert refused_code(future) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # The admin still authenticates with its own password.
    assert admin_as("admin", cluster).list_topics(timeout=TIMEOUT).topics


# --- the read-only operator: metadata, configs and groups, nothing about principals ---

def list_scram_users(user: str, cluster) -> subprocess.CompletedProcess[str]:
    """Kafka's own ConfigCommand, as `user`: every user's SCRAM mechanisms and iterations
    (DescribeUserScramCredentials; confluent-kafka 2.16 crashes on its refusal)."""
    return kafka_tool.run("kafka.admin.ConfigCommand", "--bootstrap-server", client_listener(cluster),
                          "--command-config", str(credentials.java_properties(user)),
                          "--describe", "--entity-type", "users", timeout=120)


def test_the_read_only_operator_may_not_list_the_scram_users(cluster):
    listed = list_scram_users("admin", cluster)
    assert listed.returncode == 0 and "SCRAM-SHA-512" in listed.stdout, listed.stderr[-2000:]
    refused = list_scram_users("operator", cluster)
    assert "SCRAM-SHA-512" not in refused.stdout, refused.stdout
    assert "ClusterAuthorizationException" in refused.stdout + refused.stderr, (refused.stdout, refused.stderr[-2000:])


def test_the_read_only_operator_may_not_describe_the_acls(cluster):
    every = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                             AclPermissionType.ANY)
    admin, operator = admin_as("admin", cluster), admin_as("operator", cluster)  # referenced until answered
    admin_sees = admin.describe_acls(every).result(timeout=TIMEOUT)
    assert len({b.principal for b in admin_sees}) > 10, "the admin sees every principal's ACLs"
    # Kafka 4.3 answers a principal without Describe on the cluster with no binding at all
    # (not an error): not even its own.
    assert operator.describe_acls(every).result(timeout=TIMEOUT) == []

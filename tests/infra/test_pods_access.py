"""Kafka and PostgreSQL as pods of the local Kubernetes see them: through the project
bridge, with TLS from the project CA, SCRAM-SHA-512 as the catalogue job's user and
the ACLs the chart gives its KafkaUser; and the material `make up` exports for
Kubernetes Secrets (.run/pods-access).

The refusals of every listener (CLIENT, REPLICATION, CONTROLLER, PODS) are counted
in tests/security."""

from __future__ import annotations

import json
import socket
import ssl
import stat
import subprocess
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramMechanism,
)

from helpers import (
    LOCAL_INVENTORY,
    ROOT,
    VENV_BIN,
    ansible_env,
    first_error,
    load_module,
    parse_properties,
    reading,
    role_dir,
)
from kafka_patterns.clients import kafka

ACCESS = ROOT / ".run" / "pods-access"
ADMIN_PASSWORD = ROOT / ".run" / "kafka-access" / "admin.password"
BRIDGE_ADDRESS = "198.51.100.1"
TIMEOUT = 30
PG_VARS = ("postgresql_port", "postgresql_database", "postgresql_app_user", "postgresql_app_password",
           "postgresql_replication_password")
KAFKA_USERS_MODULE = role_dir("kafka_access") / "library" / "kafka_users.py"


def load_kafka_users_module():
    """The kafka_access role's module: its catalogue -> users/ACLs derivation."""
    return load_module("kp_kafka_users", KAFKA_USERS_MODULE)


@pytest.fixture(scope="module")
def access(cluster) -> Path:
    if not (ACCESS / "bootstrap").is_file():
        pytest.fail(f"{ACCESS} has no bootstrap file: run `make up` (the local inventory sets kafka_pods_port)")
    return ACCESS


@pytest.fixture(scope="module")
def bootstrap(access) -> str:
    return (access / "bootstrap").read_text().strip()


@pytest.fixture(scope="module")
def inventory_vars() -> dict[str, Any]:
    """The local inventory's PODS ports and PostgreSQL credentials, as Ansible resolves them."""
    pg = ", ".join(f'"{k}": hostvars["postgres-1"].{k}' for k in PG_VARS)
    resolve = ('{{ {"pods": groups["kafka_brokers"] | map("extract", hostvars, "kafka_pods_port") | list,'
               ' "pods_host": kafka_pods_host, "pg": {' + pg + '}} | to_json }}')
    cmd = [str(VENV_BIN / "ansible"), "kafka-1", "-i", str(LOCAL_INVENTORY),
           "--playbook-dir", str(ROOT / "ansible" / "playbooks"),
           "-m", "ansible.builtin.debug", "-a", json.dumps({"msg": resolve})]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ansible_env(), cwd=ROOT / "ansible", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(json.loads(proc.stdout.split("=>", 1)[1])["msg"])


def password(user: str) -> str:
    return (ACCESS / "users" / f"{user}.password").read_text().strip()


def pods_config(bootstrap: str, user: str, secret: str, **more: Any) -> dict[str, Any]:
    """A client as a pod is configured: TLS with ca.crt, SCRAM-SHA-512 as the job's user."""
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user, "sasl.password": secret, "ssl.ca.location": str(ACCESS / "ca.crt"),
            "socket.timeout.ms": 10000, **more}


@pytest.fixture(scope="module")
def job(cat) -> dict[str, Any]:
    """A job with Kafka inputs and Kafka outputs, not transactional (so that producing as
    it fences no running copier)."""
    return next(j for j in cat["jobs"] if j["inputs"] and not j.get("transactional")
                and any(not o.startswith("postgres:") for o in j["outputs"]))


def job_user(job: dict[str, Any]) -> str:
    return load_kafka_users_module().k8s_name(job["name"])


# --- what `make up` exports ---------------------------------------------------------

def test_the_exported_material_is_complete_and_private(access, cat, inventory_vars):
    assert (access / "bootstrap").read_text() == ",".join(
        f"{inventory_vars['pods_host']}:{p}" for p in inventory_vars["pods"]) + "\n"
    assert inventory_vars["pods_host"] == BRIDGE_ADDRESS
    assert "BEGIN CERTIFICATE" in (access / "ca.crt").read_text()
    module = load_kafka_users_module()
    users = {p.name.removesuffix(".password") for p in (access / "users").glob("*.password")}
    assert users == {module.k8s_name(j["name"]) for j in cat["jobs"]} | {u["name"] for u in cat["users"]}
    for user in users:
        secret = password(user)
        assert len(secret) == 32 and secret.isalnum(), user
    pg = inventory_vars["pg"]
    assert (access / "postgres-app.password").read_text().strip() == pg["postgresql_app_password"]
    assert (access / "postgres-cdc.password").read_text().strip() == pg["postgresql_replication_password"]
    secrets = [*(access / "users").glob("*.password"), access / "postgres-app.password",
               access / "postgres-cdc.password", ADMIN_PASSWORD, ROOT / ".run" / "pki" / "ca" / "ca.key"]
    for path in secrets:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for path in (access, access / "users", ADMIN_PASSWORD.parent, ROOT / ".run" / "pki" / "ca"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_no_broker_file_holds_a_password(access, cluster):
    secrets = [password(u) for u in (p.name.removesuffix(".password") for p in (access / "users").glob("*.password"))]
    secrets.append(ADMIN_PASSWORD.read_text().strip())
    for node in cluster.nodes:
        text = (ROOT / ".run" / "kafka" / node.name / "server.properties").read_text()
        assert not [s for s in secrets if s in text], node.name
        props = parse_properties(text)
        for listener in ("client", "pods"):
            assert props[f"listener.name.{listener}.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
            assert "password" not in props[f"listener.name.{listener}.scram-sha-512.sasl.jaas.config"]
        keystore = Path(props["ssl.keystore.location"])
        assert stat.S_IMODE(keystore.stat().st_mode) == 0o600, keystore


# --- TLS ------------------------------------------------------------------------------

def test_every_pods_listener_presents_a_certificate_of_the_project_ca_for_the_bridge_address(bootstrap):
    context = ssl.create_default_context(cafile=str(ACCESS / "ca.crt"))  # verifies the chain and the IP SAN
    for address in bootstrap.split(","):
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw, \
                context.wrap_socket(raw, server_hostname=host) as tls:
            sans = {value for kind, value in tls.getpeercert()["subjectAltName"] if kind == "IP Address"}
        assert {BRIDGE_ADDRESS, "127.0.0.1"} <= sans, (address, sans)


def test_a_certificate_from_another_ca_is_refused(bootstrap):
    context = ssl.create_default_context()  # the system's CAs: not ours
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw, pytest.raises(ssl.SSLCertVerificationError):
        context.wrap_socket(raw, server_hostname=host)


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SASL_PLAINTEXT"])
def test_a_client_without_tls_gets_nowhere_on_the_pods_port(bootstrap, job, protocol):
    config = {**pods_config(bootstrap, job_user(job), password(job_user(job))), "security.protocol": protocol}
    config.pop("ssl.ca.location")
    error = first_error(config)  # the broker drops the connection: it speaks TLS first
    assert error.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), error


# --- SCRAM ----------------------------------------------------------------------------

def test_a_wrong_password_is_refused(bootstrap, job):
    error = first_error(pods_config(bootstrap, job_user(job), "not-" + password(job_user(job))))
    assert error.code() == KafkaError._AUTHENTICATION, error


def test_an_unknown_user_is_refused(bootstrap):
    error = first_error(pods_config(bootstrap, f"nobody-{uuid.uuid4().hex[:8]}", "x" * 32))
    assert error.code() == KafkaError._AUTHENTICATION, error


def test_every_job_user_and_the_admin_have_a_scram_sha_512_credential(access, cat):
    module = load_kafka_users_module()
    admin = kafka.admin("admin")  # kept referenced until the result is in
    described = admin.describe_user_scram_credentials().result(timeout=TIMEOUT)
    for user in [module.k8s_name(j["name"]) for j in cat["jobs"]] + [u["name"] for u in cat["users"]] + ["admin"]:
        assert user in described, user
        assert {i.mechanism for i in described[user].scram_credential_infos} == {ScramMechanism.SCRAM_SHA_512}, user


def test_the_admin_is_a_super_user_over_tls(bootstrap, cat):
    admin = AdminClient(pods_config(bootstrap, "admin", ADMIN_PASSWORD.read_text().strip()))
    topics = admin.list_topics(timeout=TIMEOUT).topics
    assert {t["name"] for t in cat["topics"]} <= set(topics)


# --- ACLs -----------------------------------------------------------------------------

def test_the_cluster_holds_exactly_the_acls_of_the_charts_kafka_users(cat):
    """The kafka_users module derives them as the chart's KafkaUser template does
    (tests/iac/test_local_and_kubernetes_agree.py); here: the running cluster has them."""
    module = load_kafka_users_module()
    want = module.desired_users(cat["jobs"], cat["users"])
    admin = kafka.admin("admin")
    every = admin.describe_acls(
        AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                         AclPermissionType.ANY)).result(timeout=TIMEOUT)
    types = {v: k for k, v in module.RESOURCE_TYPES.items()}
    have: dict[str, set[tuple[str, str | None, str, str]]] = {u: set() for u in want}
    for b in every:
        user = b.principal.removeprefix("User:")
        if user not in want:
            continue
        assert (b.permission_type, b.host) == (AclPermissionType.ALLOW, "*"), b
        rtype = types[b.restype.name]
        op = "".join(w.capitalize() for w in b.operation.name.split("_"))
        patterns = {v: k for k, v in module.PATTERN_TYPES.items()}
        have[user].add((rtype, None if rtype == "cluster" else b.name, patterns[b.resource_pattern_type.name], op))
    assert have == want
    assert not [b for b in every if b.principal == "User:admin"], "admin is a super user and needs no ACL"


def test_a_job_user_produces_to_its_output_and_consumes_its_input_over_tls(bootstrap, job):
    user, run = job_user(job), uuid.uuid4().hex
    value = json.dumps(reading(1, run=f"pods-access-{run}")).encode()
    source, sink = job["inputs"][0], next(o for o in job["outputs"] if not o.startswith("postgres:"))

    # Into its input as the scenario driver through loopback, then read back as the job.
    offsets: list[tuple[int, int]] = []
    feeder = kafka.producer()
    feeder.produce(source, key=run.encode(), value=value,
                   on_delivery=lambda err, msg: offsets.append((msg.partition(), msg.offset())) if not err else None)
    assert feeder.flush(TIMEOUT) == 0 and offsets, "the loopback producer could not write"
    partition, offset = offsets[0]
    consumer = Consumer(pods_config(bootstrap, user, password(user), **{"group.id": job["name"],
                                                                          "enable.auto.commit": False}))
    try:
        consumer.assign([TopicPartition(source, partition, offset)])
        msg = kafka.wait_until(lambda: consumer.poll(1.0), timeout=TIMEOUT, what=f"the record on {source}")
        assert msg.error() is None, msg.error()
        assert msg.value() == value
    finally:
        consumer.close()

    # Into its output as the job, with acks=all and idempotence, read back through loopback.
    results: list[Any] = []
    producer = Producer(pods_config(bootstrap, user, password(user), acks="all", **{"enable.idempotence": True}))
    producer.produce(sink, key=run.encode(), value=value, on_delivery=lambda err, msg: results.append((err, msg)))
    assert producer.flush(TIMEOUT) == 0
    err, msg = results[0]
    assert err is None, err
    check = kafka.consumer(f"pods-access-check-{run}")
    try:
        check.assign([TopicPartition(sink, msg.partition(), msg.offset())])
        got = kafka.wait_until(lambda: check.poll(1.0), timeout=TIMEOUT, what=f"the record on {sink}")
        assert got.value() == value
    finally:
        check.close()


def test_a_job_user_may_not_write_where_the_catalogue_does_not_let_it(bootstrap, job):
    user = job_user(job)
    results: list[Any] = []
    producer = Producer(pods_config(bootstrap, user, password(user), acks="all"))
    # Its input: Read and Describe, no Write.
    producer.produce(job["inputs"][0], value=b"x", on_delivery=lambda err, msg: results.append(err))
    producer.flush(TIMEOUT)
    assert results and results[0] is not None
    assert results[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, results[0]


def test_a_job_user_may_not_read_a_topic_it_has_no_acl_for(bootstrap, cat, job):
    user = job_user(job)
    mine = {*job["inputs"], *job.get("lookups", []), *job.get("state", []), *job["outputs"], job.get("deadletter")}
    other = next(t["name"] for t in cat["topics"] if t["name"] not in mine)
    consumer = Consumer(pods_config(bootstrap, user, password(user), **{"group.id": job["name"],
                                                                          "enable.auto.commit": False}))
    try:
        consumer.subscribe([other])  # joins its own group (allowed), then asks for a topic it may not read

        def refused():
            msg = consumer.poll(1.0)
            return msg.error() if msg is not None and msg.error() else None

        error = kafka.wait_until(refused, timeout=TIMEOUT, what=f"the refusal to read {other}")
        assert error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error
    finally:
        consumer.close()


def test_a_job_user_may_describe_its_own_group_but_not_another_jobs(bootstrap, cat, job):
    user = job_user(job)
    admin = AdminClient(pods_config(bootstrap, user, password(user)))
    other = next(j["name"] for j in cat["jobs"] if j["name"] != job["name"])
    futures = admin.describe_consumer_groups([job["name"], other], request_timeout=TIMEOUT)
    futures[job["name"]].result(timeout=TIMEOUT)
    with pytest.raises(KafkaException) as refused:
        futures[other].result(timeout=TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED, refused.value


# --- PostgreSQL -----------------------------------------------------------------------

def pg_connect(pg: dict[str, Any], user: str, secret: str) -> psycopg.Connection:
    return psycopg.connect(host=BRIDGE_ADDRESS, port=int(pg["postgresql_port"]), dbname=pg["postgresql_database"],
                           user=user, password=secret, connect_timeout=10)


def test_postgres_on_the_bridge_accepts_the_app_password(access, inventory_vars):
    pg = inventory_vars["pg"]
    with pg_connect(pg, pg["postgresql_app_user"], (access / "postgres-app.password").read_text().strip()) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == pg["postgresql_app_user"]
        # scram-sha-256 for the bridge network, never trust or md5.
        assert conn.info.host == BRIDGE_ADDRESS


def test_postgres_on_the_bridge_refuses_a_wrong_password(inventory_vars):
    pg = inventory_vars["pg"]
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        pg_connect(pg, pg["postgresql_app_user"], "wrong-" + uuid.uuid4().hex)

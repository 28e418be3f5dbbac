"""Run inside a pod of the project image (tests/kube/test_strimzi.py passes this file's
text to `python3 -c`): what a client on the cluster gets from the Kafka the Strimzi
operator runs, through its bootstrap Service, as the catalogue users of the KafkaUser
Secrets the User Operator wrote. Prints one JSON object.

Environment: BOOTSTRAP (host:port of the TLS listener), CA_FILE (the cluster CA),
USER (a catalogue job) and USER_PASSWORD_FILE, OWN_INPUT (a topic the job reads),
OWN_WRITE (a topic it writes), FOREIGN_TOPIC (one it has no ACL for), FOREIGN_GROUP
(another job's group)."""

import json
import os
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient

BOOTSTRAP = os.environ["BOOTSTRAP"]
CA = os.environ["CA_FILE"]
USER = os.environ["USER"]
PASSWORD = Path(os.environ["USER_PASSWORD_FILE"]).read_text().strip()
TIMEOUT = 45


def as_user(password: str = PASSWORD, **more) -> dict:
    return {"bootstrap.servers": BOOTSTRAP, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": USER, "sasl.password": password, "ssl.ca.location": CA,
            "socket.timeout.ms": 10000, **more}


def first_error(config: dict) -> str:
    """The first error a client with this config meets (poll serves the error callback),
    and whether it still learned the cluster's metadata (it must not)."""
    errors = []
    admin = AdminClient({**config, "error_cb": errors.append, "log_level": 0})  # refusals are expected
    deadline = time.monotonic() + TIMEOUT
    while not errors and time.monotonic() < deadline:
        admin.poll(0.5)
    try:
        admin.list_topics(timeout=2)
        learned = " (and metadata answered)"
    except KafkaException:
        learned = ""
    return (errors[0].name() if errors else "no error within the timeout") + learned


def delivery(topic: str) -> str | None:
    """Produce one record with acks=all; the delivery error's name, None when written."""
    results = []
    producer = Producer(as_user(acks="all", **{"message.timeout.ms": 30000}))
    producer.produce(topic, value=f"kafka_probe {uuid.uuid4().hex}".encode(),
                     on_delivery=lambda error, _msg: results.append(error))
    producer.flush(TIMEOUT)
    if not results:
        return "no delivery report"
    return None if results[0] is None else results[0].name()


def consume_error(topic: str, group: str) -> str:
    consumer = Consumer(as_user(**{"group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error():
                return msg.error().name()
            if consumer.assignment():
                return "none: partitions assigned"
        return "no answer within the timeout"
    finally:
        consumer.close()


def replication(topic: str) -> dict:
    """Replicas and in-sync replicas per partition, as the job's own metadata sees them."""
    metadata = AdminClient(as_user()).list_topics(topic, timeout=TIMEOUT)
    partitions = metadata.topics[topic].partitions
    return {"brokers": len(metadata.brokers),
            "partitions": {p.id: {"replicas": len(p.replicas), "isr": len(p.isrs)} for p in partitions.values()}}


answer = {
    "written": delivery(os.environ["OWN_WRITE"]),
    "own_group": consume_error(os.environ["OWN_INPUT"], USER),
    "replication": replication(os.environ["OWN_INPUT"]),
    "refusals": {
        "plain text": first_error({"bootstrap.servers": BOOTSTRAP, "security.protocol": "PLAINTEXT",
                                   "socket.timeout.ms": 10000}),
        "TLS without credentials": first_error({"bootstrap.servers": BOOTSTRAP, "security.protocol": "SSL",
                                                "ssl.ca.location": CA, "socket.timeout.ms": 10000}),
        "a wrong password": first_error(as_user(password="not-" + PASSWORD)),
        "produce to its own input": delivery(os.environ["OWN_INPUT"]),
        "consume a topic without an ACL": consume_error(os.environ["FOREIGN_TOPIC"], f"{USER}-refusal"),
        "join another job's group": consume_error(os.environ["OWN_INPUT"], os.environ["FOREIGN_GROUP"]),
    },
}
print(json.dumps(answer))

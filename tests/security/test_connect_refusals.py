"""Kafka Connect's REST API refuses whoever the secure default does not let in:

- plain HTTP (the API is HTTPS only);
- no credentials, a wrong password, a Kafka catalogue user (a Kafka password is no
  REST credential): 401, on creating a connector and on reading a connector's config;
- an authenticated REST user creating a FileStreamSource connector (it would read any
  file the worker can, /etc/passwd, into a topic): the plugin is not installed;
- reading a catalogue connector's config (or its tasks' configs) never shows a
  password, only the worker's ${file:...} references.
Every case must be refused; each is one test. Skipped, with the reason, only when the
Connect worker is not running."""

from __future__ import annotations

import json
import re
import uuid

import pytest
import requests

from kafka_patterns.clients import connect, kafka
from kafka_patterns.config import credentials, inventory

TIMEOUT = 15
REFERENCE = re.compile(r"^\$\{file:/[^:}]+:[^:}]+\}$")
# What an attacker would ask for: the worker's /etc/passwd into a topic.
FILESTREAM_SOURCE = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                     "tasks.max": "1", "file": "/etc/passwd", "topic": "cdc.stolen"}


@pytest.fixture(scope="module")
def rest_url() -> str:
    cluster = inventory.load()
    url = cluster.connect_url
    host, port = url.split("://", 1)[-1].rsplit(":", 1)
    if not inventory.listening(host, int(port)):
        reason = f"Kafka Connect is not running: nothing listens on {host}:{port} (make up starts it)"
        print(reason)
        pytest.skip(reason)
    return url


@pytest.fixture(scope="module")
def ca() -> str:
    return str(connect.access().ca_file)


def probe_name() -> str:
    return f"refusal-probe-{uuid.uuid4().hex[:8]}"


def absent(rest_url: str, name: str) -> bool:
    """The connector does not exist (asked as the REST user)."""
    return connect.request("GET", f"/connectors/{name}", base_url=rest_url, timeout=TIMEOUT).status_code == 404


def create_connector(rest_url: str, ca: str, name: str, auth=None) -> requests.Response:
    body = {"name": name, "config": {**FILESTREAM_SOURCE}}
    return requests.post(f"{rest_url}/connectors", json=body, auth=auth, verify=ca, timeout=TIMEOUT)


def read_config(rest_url: str, ca: str, auth=None) -> requests.Response:
    name = next(iter(connect.specs()))
    return requests.get(f"{rest_url}/connectors/{name}/config", auth=auth, verify=ca, timeout=TIMEOUT)


def test_plain_http_is_refused(rest_url):
    plain = "http://" + rest_url.split("://", 1)[1]
    try:
        r = requests.get(f"{plain}/connectors", timeout=TIMEOUT)
    except requests.ConnectionError:
        return  # the TLS listener answers no HTTP
    assert r.status_code >= 400, f"plain HTTP answered {r.status_code}: {r.text[:200]}"


def test_no_credentials_get_401_on_create_connector(rest_url, ca):
    name = probe_name()
    r = create_connector(rest_url, ca, name)
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert absent(rest_url, name)


def test_no_credentials_get_401_on_read_config(rest_url, ca):
    r = read_config(rest_url, ca)
    assert r.status_code == 401, (r.status_code, r.text[:300])


def test_a_wrong_password_gets_401_on_create_connector(rest_url, ca):
    name = probe_name()
    r = create_connector(rest_url, ca, name, auth=(connect.access().rest_user, "not-the-password"))
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert absent(rest_url, name)


def test_a_wrong_password_gets_401_on_read_config(rest_url, ca):
    r = read_config(rest_url, ca, auth=(connect.access().rest_user, "not-the-password"))
    assert r.status_code == 401, (r.status_code, r.text[:300])


@pytest.mark.parametrize("user", ["harness", "connect"])
def test_a_kafka_catalogue_user_is_no_rest_user(rest_url, ca, user):
    auth = (user, credentials.password(user))
    name = probe_name()
    created = create_connector(rest_url, ca, name, auth=auth)
    assert created.status_code == 401, (created.status_code, created.text[:300])
    assert absent(rest_url, name)
    read = read_config(rest_url, ca, auth=auth)
    assert read.status_code == 401, (read.status_code, read.text[:300])


def test_an_authenticated_filestream_source_connector_is_refused_plugin_not_installed(rest_url, ca):
    name = probe_name()
    try:
        r = create_connector(rest_url, ca, name, auth=connect.access().auth)
        assert r.status_code >= 400, f"Connect accepted a FileStreamSource connector: {r.status_code} {r.text[:300]}"
        assert "FileStreamSourceConnector" in r.text, r.text[:500]
        assert absent(rest_url, name)
        plugins = connect.request("GET", "/connector-plugins", base_url=rest_url, timeout=TIMEOUT).json()
        assert not [p["class"] for p in plugins if ".connect.file." in p["class"]]
    finally:
        # Never leave such a connector behind, whatever went wrong above.
        connect.request("DELETE", f"/connectors/{name}", base_url=rest_url, timeout=TIMEOUT)


def shows_no_password(rest_url: str, name: str, secrets: set[str]) -> None:
    """The connector's config (and its tasks' configs, the connector's own output from
    the resolved config) carry ${file:...} references, never a password."""
    config = connect.request("GET", f"/connectors/{name}/config", base_url=rest_url, timeout=TIMEOUT)
    assert config.status_code == 200, (config.status_code, config.text[:300])
    password_keys = [k for k in config.json() if "password" in k]
    assert password_keys, f"{name} has no password setting to check"
    for key in password_keys:
        assert REFERENCE.match(config.json()[key]), f"{name} {key} is no ${{file:...}} reference"
    for path in (f"/connectors/{name}/config", f"/connectors/{name}", f"/connectors/{name}/tasks"):
        r = connect.request("GET", path, base_url=rest_url, timeout=TIMEOUT)
        text = json.dumps(r.json()) if r.status_code == 200 else r.text
        assert not [s for s in secrets if s in text], f"GET {path} shows a password"


def test_a_catalogue_connectors_config_shows_no_password(rest_url):
    cluster = inventory.load()
    secrets = {s for s in (cluster.postgres_password, cluster.postgres_replication_password,
                           credentials.password("connect")) if s}
    # A connector built exactly like the catalogue's JDBC sink (kafka_patterns.clients.connect), on
    # a topic that does not exist: it writes nothing, and its task resolves the password.
    spec = next(s for s in connect.specs().values() if s["class"].endswith("JdbcSinkConnector"))
    probe = "refusal-probe-sink"
    config = {**connect.connector_config(spec, cluster), "topics": "connect-refusal-probe.none"}
    try:
        r = connect.request("PUT", f"/connectors/{probe}/config", base_url=rest_url, json=config, timeout=TIMEOUT)
        assert r.status_code in (200, 201), (r.status_code, r.text[:500])
        kafka.wait_until(lambda: connect.request("GET", f"/connectors/{probe}/tasks", base_url=rest_url,
                                                   timeout=TIMEOUT).json(),
                           60, interval=1, what=f"the tasks of connector {probe}")
        shows_no_password(rest_url, probe, secrets)
    finally:
        connect.request("DELETE", f"/connectors/{probe}", base_url=rest_url, timeout=TIMEOUT)
    # The catalogue's own connectors, where the CDC pattern registered them (a source is
    # not registered here: it needs its table first).
    for name in connect.specs():
        if not absent(rest_url, name):
            shows_no_password(rest_url, name, secrets)

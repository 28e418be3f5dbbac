"""The schema registry refuses whoever the secure default does not let in:

- plain HTTP (the API is HTTPS only);
- no credentials, a wrong password, a Kafka catalogue user (a Kafka password is no
  registry credential): 401;
- the reader (the jobs' user) creating an artifact, adding a version or a rule: 403;
- anyone deleting, reading the admin API (export, config) or using the
  Confluent-compatible API: 403;
- a breaking schema version, refused by the registry itself (the artifact's BACKWARD
  rule), with its message, through kafka_patterns.clients.registry; the compatible one accepted.
The admin's allowed calls are checked too, so each refusal is one of a user who could
otherwise act. Throwaway artifacts go to a group of their own, a new id per run, so
re-runs pass. Skipped, with the reason, only when the registry is not running."""

from __future__ import annotations

import uuid

import pytest
import requests

from kafka_patterns.clients import registry
from kafka_patterns.clients.registry import Registry, RegistryRefused
from kafka_patterns.config import credentials, inventory

TIMEOUT = 15
PROBES = "refusal-probes"
# Draft-07 and closed (additionalProperties: false): Apicurio 3.3.3's JSON compatibility
# check answers HTTP 500 "could not determine version" for a 2019-09 or 2020-12 $schema,
# and under BACKWARD it refuses a property added to an open object ("property schemas
# narrowed"); to a closed one, an optional property is a compatible change.
V1 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
      "properties": {"name": {"type": "string"}}, "required": ["name"]}
# Compatible: an optional property more.
V2 = {**V1, "properties": {**V1["properties"], "age": {"type": "integer"}}}
# Breaking: name changes type and age becomes required.
BREAKING = {**V1, "properties": {"name": {"type": "integer"}, "age": {"type": "integer"}},
            "required": ["name", "age"]}


@pytest.fixture(scope="module")
def url() -> str:
    urls = inventory.load().registry_urls
    if not urls:
        pytest.skip("the inventory has no schema_registry host")
    host, port = urls[0].split("://", 1)[1].rsplit(":", 1)
    if not inventory.listening(host, int(port)):
        reason = f"the schema registry is not running: nothing listens on {host}:{port} (make up starts it)"
        print(reason)
        pytest.skip(reason)
    return urls[0]


@pytest.fixture(scope="module")
def admin(url) -> Registry:
    r = Registry.from_inventory("admin")
    r.group = PROBES
    return r


@pytest.fixture(scope="module")
def reader(url) -> Registry:
    r = Registry.from_inventory("reader")
    r.group = PROBES
    return r


@pytest.fixture(scope="module")
def ca() -> str:
    return str(credentials.ca_file())


@pytest.fixture(scope="module")
def probe(admin) -> str:
    """A throwaway artifact of this run (v1), for the refusals that need one."""
    name = f"probe-{uuid.uuid4().hex[:8]}"
    admin.register(name, 1, V1)
    return name


def api(url: str, path: str) -> str:
    return f"{url}{registry.API}{path}"


def create_body(name: str) -> dict:
    return {"artifactId": name, "artifactType": "JSON",
            "firstVersion": {"version": "1", "content": registry.content(V1)}}


def absent(admin: Registry, name: str) -> bool:
    return admin.call("GET", admin.path(name))[0] == 404


def test_plain_http_is_refused(url):
    plain = "http://" + url.split("://", 1)[1]
    try:
        r = requests.get(api(plain, "/system/info"), timeout=TIMEOUT)
    except requests.ConnectionError:
        return  # the TLS listener answers no HTTP
    assert r.status_code >= 400, f"plain HTTP answered {r.status_code}: {r.text[:200]}"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_no_credentials_get_401(url, ca, method):
    name = f"probe-{uuid.uuid4().hex[:8]}"
    r = requests.request(method, api(url, f"/groups/{PROBES}/artifacts"), verify=ca, timeout=TIMEOUT,
                         json=create_body(name) if method == "POST" else None)
    assert r.status_code == 401, (r.status_code, r.text[:300])


@pytest.mark.parametrize("role", ["admin", "reader"])
def test_a_wrong_password_gets_401(url, ca, admin, role):
    user = Registry.from_inventory(role).user
    name = f"probe-{uuid.uuid4().hex[:8]}"
    r = requests.post(api(url, f"/groups/{PROBES}/artifacts"), json=create_body(name), auth=(user, "not-the-password"),
                      verify=ca, timeout=TIMEOUT)
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert absent(admin, name)


def test_a_kafka_catalogue_user_is_no_registry_user(url, ca):
    r = requests.get(api(url, f"/groups/{PROBES}/artifacts"), auth=("harness", credentials.password("harness")),
                     verify=ca, timeout=TIMEOUT)
    assert r.status_code == 401, (r.status_code, r.text[:300])


def test_the_reader_cannot_create_an_artifact(url, ca, admin, reader):
    name = f"probe-{uuid.uuid4().hex[:8]}"
    r = requests.post(api(url, f"/groups/{PROBES}/artifacts"), json=create_body(name),
                      auth=(reader.user, reader.password), verify=ca, timeout=TIMEOUT)
    assert r.status_code == 403, (r.status_code, r.text[:300])
    assert absent(admin, name)


def test_the_reader_cannot_add_a_version_or_change_a_rule(url, ca, admin, reader, probe):
    auth = (reader.user, reader.password)
    body = {"version": "2", "content": registry.content(V2)}
    version = requests.post(api(url, admin.path(probe, "versions")), json=body, auth=auth, verify=ca, timeout=TIMEOUT)
    assert version.status_code == 403, (version.status_code, version.text[:300])
    rule = requests.put(api(url, admin.path(probe, "rules", "COMPATIBILITY")),
                        json={"ruleType": "COMPATIBILITY", "config": "NONE"}, auth=auth, verify=ca, timeout=TIMEOUT)
    assert rule.status_code == 403, (rule.status_code, rule.text[:300])
    assert admin.version_meta(probe, 2) is None


@pytest.mark.parametrize("role", ["admin", "reader"])
def test_nobody_deletes(url, ca, admin, probe, role):
    user = Registry.from_inventory(role)
    r = requests.delete(api(url, admin.path(probe)), auth=(user.user, user.password), verify=ca, timeout=TIMEOUT)
    assert r.status_code == 403, (r.status_code, r.text[:300])
    assert not absent(admin, probe)


@pytest.mark.parametrize("path", ["/apis/registry/v3/admin/export", "/apis/registry/v3/admin/config/properties",
                                  "/apis/ccompat/v7/subjects", "/apis/registry/v2/groups"])
def test_the_admin_and_other_apis_are_refused_even_to_the_admin(url, ca, admin, path):
    r = requests.get(url + path, auth=(admin.user, admin.password), verify=ca, timeout=TIMEOUT)
    assert r.status_code == 403, (path, r.status_code, r.text[:300])


def test_the_admin_creates_and_the_reader_reads(admin, reader):
    name = f"probe-{uuid.uuid4().hex[:8]}"
    schema_id = admin.register(name, 1, V1)
    assert admin.register(name, 1, V1) == schema_id, "registering the same version again is idempotent"
    assert reader.id_of(name, 1) == schema_id
    assert reader.schema_by_id(schema_id) == V1
    assert admin.call("GET", admin.path(name, "rules", "COMPATIBILITY"))[1]["config"] == "BACKWARD"


def test_a_breaking_version_is_refused_by_the_registry_and_a_compatible_one_accepted(admin, reader):
    name = f"probe-{uuid.uuid4().hex[:8]}"
    admin.register(name, 1, V1)
    with pytest.raises(RegistryRefused) as refused:
        admin.register(name, 2, BREAKING)
    assert refused.value.status in (400, 409), refused.value
    assert "Incompatible" in refused.value.message or "incompatible" in refused.value.message, refused.value.message
    assert admin.version_meta(name, 2) is None
    v2 = admin.register(name, 2, V2)
    assert reader.id_of(name, 2) == v2
    assert reader.schema_by_id(v2) == V2


def test_the_catalogues_schemas_are_registered_for_the_readers(url):
    from kafka_patterns.config import schemas

    reader = Registry.from_inventory("reader")
    for name, schema in schemas.declared().items():
        for number, version in enumerate(schema.versions, start=1):
            assert reader.schema_by_id(reader.id_of(name, number)) == version, f"{name} v{number}"

"""kafka_patterns.clients.registry without a registry: the schema id header as Apicurio's serdes
write it, the requests the client sends, how it reads the registry's refusals, and what
it does on each answer (a fake transport stands in for the HTTP calls)."""

from __future__ import annotations

import base64
import json

import pytest

from kafka_patterns.clients import registry
from kafka_patterns.clients.registry import Registry, RegistryError, RegistryRefused

SCHEMA = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}


@pytest.mark.parametrize("schema_id", [0, 1, 42, 2**31, 2**63 - 1])
def test_an_id_round_trips_through_the_header_encoding(schema_id):
    assert registry.decode_id(registry.encode_id(schema_id)) == schema_id


def test_the_header_is_the_contentid_as_an_8_byte_big_endian_long():
    assert registry.VALUE_ID_HEADER == "apicurio.value.contentId"
    assert registry.encode_id(3) == b"\x00\x00\x00\x00\x00\x00\x00\x03"
    assert registry.encode_id(0x0102030405060708) == bytes(range(1, 9))
    # Java's ByteBuffer.putLong(): what the serdes write for id 3 decodes to 3.
    assert registry.decode_id(bytes([0, 0, 0, 0, 0, 0, 0, 3])) == 3


@pytest.mark.parametrize("value", [b"", b"\x00\x03", b"\x00" * 9])
def test_a_header_of_another_length_is_refused(value):
    with pytest.raises(ValueError, match="8 bytes"):
        registry.decode_id(value)


def test_a_request_carries_basic_authentication_and_json():
    r = registry.build_request("https://127.0.0.1:8081/", "POST", "/groups/g/artifacts", "registry-admin", "s3cret",
                               {"artifactId": "reading"})
    assert r.full_url == "https://127.0.0.1:8081/apis/registry/v3/groups/g/artifacts"
    assert r.get_method() == "POST"
    assert r.get_header("Authorization") == "Basic " + base64.b64encode(b"registry-admin:s3cret").decode()
    assert r.get_header("Content-type") == "application/json"
    assert json.loads(r.data) == {"artifactId": "reading"}


def test_a_get_has_no_body():
    r = registry.build_request("https://h:1", "GET", "/ids/contentIds/7", "registry-reader", "x")
    assert r.get_method() == "GET" and r.data is None and r.full_url.endswith("/apis/registry/v3/ids/contentIds/7")


def test_artifact_paths_are_in_the_projects_group_and_quoted():
    assert registry.artifact_path("reading", "versions", 2) == "/groups/kafka-patterns/artifacts/reading/versions/2"
    assert registry.artifact_path("a/b c") == "/groups/kafka-patterns/artifacts/a%2Fb%20c"


def test_the_registrys_message_is_its_detail_with_the_causes():
    body = json.dumps({"detail": "Incompatible artifact: reading [JSON], num of incompatible diffs: {1}",
                       "name": "RuleViolationException", "status": 400,
                       "causes": [{"description": "A new required property was added at /required",
                                   "context": "/required"}]}).encode()
    assert registry.registry_message(body) == ("Incompatible artifact: reading [JSON], num of incompatible diffs: "
                                               "{1} (A new required property was added at /required)")
    assert registry.registry_message(b"not json") == "not json"


def test_the_password_is_not_in_the_repr():
    assert "s3cret" not in repr(Registry("https://h:1", "registry-reader", "s3cret", None))


def test_from_env_reads_the_password_file(tmp_path, monkeypatch):
    (tmp_path / "pw").write_text("s3cret\n")
    monkeypatch.setenv("SCHEMA_REGISTRY_URL", "https://registry:8081")
    monkeypatch.setenv("SCHEMA_REGISTRY_PASSWORD_FILE", str(tmp_path / "pw"))
    monkeypatch.setenv("SCHEMA_REGISTRY_CA_FILE", "/etc/ca/ca.crt")
    monkeypatch.delenv("SCHEMA_REGISTRY_PASSWORD", raising=False)
    monkeypatch.delenv("SCHEMA_REGISTRY_USER", raising=False)
    r = Registry.from_env()
    assert (r.url, r.user, r.password, str(r.ca_file)) == ("https://registry:8081", "registry-reader", "s3cret",
                                                          "/etc/ca/ca.crt")


def test_from_env_without_a_password_names_the_variables(monkeypatch):
    monkeypatch.setenv("SCHEMA_REGISTRY_URL", "https://registry:8081")
    monkeypatch.delenv("SCHEMA_REGISTRY_PASSWORD", raising=False)
    monkeypatch.delenv("SCHEMA_REGISTRY_PASSWORD_FILE", raising=False)
    with pytest.raises(RegistryError, match="SCHEMA_REGISTRY_PASSWORD_FILE"):
        Registry.from_env()


class FakeRegistry(Registry):
    """Answers from a table {(method, path): (status, body)}; records the calls."""

    def __init__(self, answers):
        super().__init__("https://fake:1", "registry-admin", "pw", None)
        self.answers, self.calls = answers, []

    def call(self, method, path, body=None):
        self.calls.append((method, path, body))
        return self.answers.get((method, path), (404, b"{}"))


ARTIFACT = "/groups/kafka-patterns/artifacts/reading"


def test_a_new_schema_is_created_as_a_json_artifact_with_its_backward_rule():
    fake = FakeRegistry({("POST", "/groups/kafka-patterns/artifacts"): (200, {"version": {"contentId": 5}}),
                         ("POST", ARTIFACT + "/rules"): (204, None)})
    assert fake.ensure("reading", 1, SCHEMA) == (5, True)
    create = next(body for method, path, body in fake.calls if path == "/groups/kafka-patterns/artifacts")
    assert create["artifactId"] == "reading" and create["artifactType"] == "JSON"
    assert create["firstVersion"]["version"] == "1"
    assert json.loads(create["firstVersion"]["content"]["content"]) == SCHEMA
    assert ("POST", ARTIFACT + "/rules", {"ruleType": "COMPATIBILITY", "config": "BACKWARD"}) in fake.calls


def test_an_identical_version_already_there_returns_its_id_and_adds_nothing():
    fake = FakeRegistry({("GET", ARTIFACT + "/versions/1"): (200, {"contentId": 5, "globalId": 9}),
                         ("GET", ARTIFACT + "/versions/1/content"): (200, SCHEMA),
                         ("GET", ARTIFACT + "/rules"): (200, ["COMPATIBILITY"])})
    assert fake.register("reading", 1, SCHEMA) == 5
    assert not [c for c in fake.calls if c[0] == "POST"]


def test_a_version_number_taken_by_other_content_is_refused():
    fake = FakeRegistry({("GET", ARTIFACT + "/versions/1"): (200, {"contentId": 5}),
                         ("GET", ARTIFACT + "/versions/1/content"): (200, {"type": "string"})})
    with pytest.raises(RegistryRefused, match="registered with other content"):
        fake.register("reading", 1, SCHEMA)


def test_a_refused_version_raises_with_the_registrys_message():
    refusal = json.dumps({"detail": "Incompatible artifact: reading [JSON]", "name": "RuleViolationException"})
    fake = FakeRegistry({("GET", ARTIFACT): (200, {"artifactId": "reading"}),
                         ("GET", ARTIFACT + "/rules"): (200, ["COMPATIBILITY"]),
                         ("POST", ARTIFACT + "/versions"): (400, refusal.encode())})
    with pytest.raises(RegistryRefused) as refused:
        fake.register("reading", 2, SCHEMA)
    assert refused.value.status == 400
    assert refused.value.message == "Incompatible artifact: reading [JSON]"
    assert "schema reading version 2" in str(refused.value)


def test_schema_by_id_asks_once_per_id():
    fake = FakeRegistry({("GET", "/ids/contentIds/5"): (200, SCHEMA)})
    assert fake.schema_by_id(5) == SCHEMA
    assert fake.schema_by_id(5) == SCHEMA
    assert fake.calls == [("GET", "/ids/contentIds/5", None)]


def test_id_of_an_unregistered_version_says_so():
    with pytest.raises(RegistryError, match="reading version 3 is not registered"):
        FakeRegistry({}).id_of("reading", 3)

"""The schema registry (Apicurio Registry 3, REST API v3): the catalogue's record schemas
(kafka_patterns.config.schemas) registered under group `kafka-patterns`, one JSON artifact per
schema (artifactId = the schema's name), versions "1", "2", ... in order, each artifact
with its compatibility rule (BACKWARD), so the registry itself refuses a breaking version.

Where it is and who asks:
- local and hosts paths: the URL from the inventory (group schema_registry), the project
  CA and the users' password files (mode 0600) from the client file role schema_registry
  writes (.run/kafka-access/registry.json);
- Kubernetes (or anywhere): SCHEMA_REGISTRY_URL, SCHEMA_REGISTRY_USER, the password in
  SCHEMA_REGISTRY_PASSWORD or the file SCHEMA_REGISTRY_PASSWORD_FILE, the CA in
  SCHEMA_REGISTRY_CA_FILE.
The jobs read as `registry-reader` (GET only); `make up` registers as `registry-admin`.

    python -m kafka_patterns.clients.registry sync    # every version of every declared schema

Only the standard library (urllib): the jobs' image installs no HTTP client.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import struct
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GROUP = "kafka-patterns"
API = "/apis/registry/v3"
DEFAULT_COMPATIBILITY = "BACKWARD"

# The record header Apicurio's Kafka serdes (3.x) carry a value's schema id in, and its
# encoding. Found in the Apicurio Registry sources (github.com/Apicurio/apicurio-registry,
# serdes/kafka/serde-kafka-common: KafkaSerdeHeaders, DefaultHeadersHandler,
# KafkaSerdeConfig; serdes/generic/serde-common: SerdeConfig):
# - the id the serdes use by default is the contentId (SerdeConfig.USE_ID_DEFAULT =
#   IdOption.contentId; 2.x used the globalId);
# - with headers on (apicurio.registry.headers.enabled=true; off by default, then the id
#   goes into the payload after a magic byte, as 4 bytes), DefaultHeadersHandler writes it
#   as the header "apicurio.value.contentId" (HEADER_VALUE_CONTENT_ID), the key's as
#   "apicurio.key.contentId", with use-id=globalId "apicurio.value.globalId" instead;
# - the value is ByteBuffer.allocate(8).putLong(id): an 8-byte big-endian signed long.
# Read from the sources as published on GitHub; the 3.3.3 serde jars themselves are not
# on the Maven Central this project reaches, so not checked against them.
VALUE_ID_HEADER = "apicurio.value.contentId"
KEY_ID_HEADER = "apicurio.key.contentId"
ID_FORMAT = ">q"  # 8 bytes, big-endian, signed (Java's long)


def encode_id(schema_id: int) -> bytes:
    """A schema id as Apicurio's serdes write it into a record header."""
    return struct.pack(ID_FORMAT, schema_id)


def decode_id(value: bytes) -> int:
    """The schema id of a record header written by Apicurio's serdes (or encode_id)."""
    if len(value) != struct.calcsize(ID_FORMAT):
        raise ValueError(f"a schema id header has 8 bytes, this one {len(value)}")
    return struct.unpack(ID_FORMAT, value)[0]


class RegistryError(RuntimeError):
    """The registry could not be reached or answered unexpectedly; the message says why."""


class RegistryRefused(RegistryError):
    """The registry refused a schema version (a compatibility rule, a clash with an existing
    version); `message` is the registry's own explanation."""

    def __init__(self, what: str, status: int, message: str):
        super().__init__(f"{what}: the schema registry refused it (HTTP {status}): {message}")
        self.status = status
        self.message = message


def registry_message(body: bytes) -> str:
    """The explanation in an Apicurio error answer (detail, with its causes), or the body."""
    try:
        error = json.loads(body)
    except ValueError:
        return body.decode(errors="replace")[:500]
    message = error.get("detail") or error.get("message") or error.get("title") or str(error)
    causes = [c.get("description", "") for c in error.get("causes") or [] if isinstance(c, dict)]
    return message + (f" ({'; '.join(c for c in causes if c)})" if any(causes) else "")


def build_request(base_url: str, method: str, path: str, user: str, password: str,
                  body: Any = None) -> urllib.request.Request:
    """One API call: Basic authentication, JSON in and out."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    return urllib.request.Request(base_url.rstrip("/") + API + path, data=data, headers=headers, method=method)


def artifact_path(name: str, *rest: str | int, group: str = GROUP) -> str:
    quote = lambda s: urllib.parse.quote(str(s), safe="")  # noqa: E731
    return "/".join([f"/groups/{quote(group)}/artifacts/{quote(name)}", *map(quote, rest)])


def content(schema: dict[str, Any]) -> dict[str, str]:
    return {"content": json.dumps(schema, sort_keys=True), "contentType": "application/json"}


@dataclass
class Registry:
    url: str
    user: str
    password: str = field(repr=False)
    ca_file: Path | None
    timeout: float = 15
    # The artifacts' group (the tests' throwaway artifacts go to a group of their own).
    group: str = GROUP
    _schemas: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)

    # --- where it is --------------------------------------------------------------
    @classmethod
    def from_env(cls) -> Registry | None:
        """SCHEMA_REGISTRY_URL and its credentials (Kubernetes), or None when unset."""
        url = os.environ.get("SCHEMA_REGISTRY_URL")
        if not url:
            return None
        password = os.environ.get("SCHEMA_REGISTRY_PASSWORD")
        if password is None:
            path = os.environ.get("SCHEMA_REGISTRY_PASSWORD_FILE")
            if not path:
                raise RegistryError("SCHEMA_REGISTRY_URL is set but neither SCHEMA_REGISTRY_PASSWORD nor "
                                    "SCHEMA_REGISTRY_PASSWORD_FILE")
            password = Path(path).read_text().strip()
        ca = os.environ.get("SCHEMA_REGISTRY_CA_FILE")
        return cls(url, os.environ.get("SCHEMA_REGISTRY_USER", "registry-reader"), password,
                   Path(ca) if ca else None)

    @classmethod
    def from_inventory(cls, role: str = "reader") -> Registry:
        """The inventory's registry, as its `reader` (GET only) or `admin` user."""
        from kafka_patterns.config import credentials, inventory

        urls = inventory.load().registry_urls
        if not urls:
            raise RegistryError(f"the inventory {inventory.inventory_path()} has no schema_registry host")
        path = client_file()
        try:
            client = json.loads(path.read_text())
        except FileNotFoundError:
            raise RegistryError(f"no schema registry client file {path}: run `make up` "
                                f"(role schema_registry writes it)") from None
        user = client["users"][role]
        try:
            password = Path(user["password_file"]).read_text().strip()
        except FileNotFoundError:
            raise RegistryError(f"no password of the registry user {user['user']!r} in {user['password_file']}: "
                                f"run `make up` (role schema_registry makes it)") from None
        ca = Path(client.get("ca_file") or credentials.ca_file())
        return cls(urls[0], user["user"], password, ca)

    @classmethod
    def default(cls, role: str = "reader") -> Registry:
        return cls.from_env() or cls.from_inventory(role)

    # --- calls ----------------------------------------------------------------------
    def path(self, name: str, *rest: str | int) -> str:
        return artifact_path(name, *rest, group=self.group)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(status, parsed JSON or None); 4xx answers are returned, not raised."""
        request = build_request(self.url, method, path, self.user, self.password, body)
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=context) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            if e.code in (401, 403):
                raise RegistryError(f"{method} {request.full_url}: HTTP {e.code} for user {self.user!r}: "
                                    f"{registry_message(raw)}") from None
            if e.code >= 500:
                raise RegistryError(f"{method} {request.full_url}: HTTP {e.code}: {registry_message(raw)}") from None
            return e.code, raw
        except urllib.error.URLError as e:
            raise RegistryError(f"the schema registry at {self.url} does not answer: {e.reason}") from None

    def version_meta(self, name: str, version: int) -> dict[str, Any] | None:
        status, meta = self.call("GET", self.path(name, "versions", version))
        return meta if status == 200 else None

    def id_of(self, name: str, version: int) -> int:
        """The id the serdes put in a record header (the contentId) of a registered version."""
        meta = self.version_meta(name, version)
        if meta is None:
            raise RegistryError(f"schema {name} version {version} is not registered in group {self.group}")
        return int(meta["contentId"])

    def schema_by_id(self, schema_id: int) -> dict[str, Any]:
        """The schema of a record header's id (cached: a content id never changes)."""
        if schema_id not in self._schemas:
            status, schema = self.call("GET", f"/ids/contentIds/{int(schema_id)}")
            if status != 200:
                raise RegistryError(f"no schema with content id {schema_id} in the registry (HTTP {status})")
            self._schemas[schema_id] = schema
        return self._schemas[schema_id]

    def versions_of_id(self, schema_id: int) -> list[tuple[str, int]]:
        """(artifact, version) of every registered version in this group whose content
        has the id: one, unless two artifacts registered the very same schema."""
        status, found = self.call("GET", f"/search/versions?contentId={int(schema_id)}&groupId="
                                          f"{urllib.parse.quote(self.group, safe='')}")
        if status != 200:
            raise RegistryError(f"searching the versions of content id {schema_id}: HTTP {status}")
        return [(v["artifactId"], int(v["version"])) for v in found["versions"]]

    def ensure_rule(self, name: str, compatibility: str) -> None:
        status, rules = self.call("GET", self.path(name, "rules"))
        if status == 200 and "COMPATIBILITY" in rules:
            return
        status, answer = self.call("POST", self.path(name, "rules"),
                                   {"ruleType": "COMPATIBILITY", "config": compatibility})
        if status not in (200, 204, 409):
            raise RegistryRefused(f"the {compatibility} rule of {name}", status, registry_message(answer))

    def ensure(self, name: str, version: int, schema: dict[str, Any],
               compatibility: str = DEFAULT_COMPATIBILITY) -> tuple[int, bool]:
        """(id, registered now): register() that also says whether it added the version."""
        what = f"schema {name} version {version}"
        meta = self.version_meta(name, version)
        if meta is not None:
            status, existing = self.call("GET", self.path(name, "versions", version, "content"))
            if status == 200 and existing == schema:
                self.ensure_rule(name, compatibility)
                return int(meta["contentId"]), False
            raise RegistryRefused(what, 409, f"version {version} of {name} is registered with other content; "
                                             f"a changed schema is a new version")
        version_body = {"version": str(version), "content": content(schema)}
        status, _ = self.call("GET", self.path(name))
        if status == 404:
            status, answer = self.call("POST", f"/groups/{urllib.parse.quote(self.group, safe='')}/artifacts",
                                       {"artifactId": name, "artifactType": "JSON", "firstVersion": version_body})
            answer = answer.get("version", {}) if status == 200 else answer
        else:
            self.ensure_rule(name, compatibility)
            status, answer = self.call("POST", self.path(name, "versions"), version_body)
        if status != 200:
            raise RegistryRefused(what, status, registry_message(answer))
        self.ensure_rule(name, compatibility)
        return int(answer["contentId"]), True

    def register(self, name: str, version: int, schema: dict[str, Any],
                 compatibility: str = DEFAULT_COMPATIBILITY) -> int:
        """Register a schema version (idempotent: the same version again returns its id);
        raises RegistryRefused with the registry's message when it refuses it. Returns
        the id Apicurio's serdes put in a record header (VALUE_ID_HEADER)."""
        return self.ensure(name, version, schema, compatibility)[0]


def configured(role: str = "reader") -> Registry | None:
    """The registry of this environment (SCHEMA_REGISTRY_URL, or the inventory's
    schema_registry host), None where there is none (an inventory without one)."""
    from kafka_patterns.config import inventory

    registry = Registry.from_env()
    # A pod (or your own Kafka, KAFKA_BOOTSTRAP_SERVERS) knows its registry from the
    # environment only: it has no inventory.
    if registry is None and not os.environ.get("KAFKA_BOOTSTRAP_SERVERS") and inventory.load().registry_urls:
        registry = Registry.from_inventory(role)
    return registry


def value_tag(name: str, version: int, registry: Registry | None = None) -> list[tuple[str, bytes]]:
    """The record headers that tag a value as version `version` of schema `name` (the
    Apicurio serdes' header and id), [] where no registry is configured."""
    registry = registry or configured()
    if registry is None:
        return []
    return [(VALUE_ID_HEADER, encode_id(registry.id_of(name, version)))]


def client_file() -> Path:
    """Written by role schema_registry: the CA, the users and their password files."""
    from kafka_patterns.config import credentials

    return credentials.run_dir() / "kafka-access" / "registry.json"


def sync(registry: Registry) -> list[str]:
    """Every version of every schema the catalogue declares, in order; one line each."""
    from kafka_patterns.config import schemas

    lines = []
    for name, schema in schemas.declared().items():
        for number, version in enumerate(schema.versions, start=1):
            schema_id, new = registry.ensure(name, number, version, schema.compatibility)
            lines.append(f"{name} v{number}: id {schema_id} ({'registered' if new else 'already there'})")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["sync"]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        for line in sync(Registry.default("admin")):
            print(line)
    except RegistryError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

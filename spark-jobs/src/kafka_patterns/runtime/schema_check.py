"""A consumer's check of a record's schema tag. A producer that knows the schema it
wrote puts the registry's id of that schema version in a record header (the header
and encoding of the Apicurio Kafka serdes: kafka_patterns.clients.registry); the consumer
resolves the id and holds the value to that version. The reasons below go with the
record to the dead-letter topic; the job goes on.

An untagged record is judged by the reading contract alone (what every record was
before the registry). A tagged one must name a version of the schema the topic carries
(catalogue topics[].schema) and match it. Its version may be newer than any this
consumer was built with: the registry refused every version that is not BACKWARD
compatible, and the schemas are open, so the record is read all the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema


@dataclass(frozen=True)
class Version:
    """A schema version as the registry holds it."""
    name: str
    version: int
    schema: dict[str, Any]


class UnknownId(LookupError):
    """The registry has no schema under this id."""


@dataclass
class SchemaCheck:
    """expected: the schema the topic carries. resolve: registry id -> Version (raises
    UnknownId), cached by the caller. decode_id: the header's bytes -> the id (raises
    ValueError on a malformed one)."""
    expected: str
    header: str
    resolve: Callable[[int], Version]
    decode_id: Callable[[bytes], int]

    def __post_init__(self):
        self._validators: dict[int, jsonschema.protocols.Validator] = {}

    def tag_of(self, headers: Sequence[tuple[str, bytes]] | None) -> bytes | None:
        return next((v for k, v in headers or () if k == self.header), None)

    def reason(self, headers: Sequence[tuple[str, bytes]] | None, value: dict[str, Any]) -> str | None:
        """Why a decoded value breaks the schema its header names, or None."""
        tag = self.tag_of(headers)
        if tag is None:
            return None
        try:
            schema_id = self.decode_id(tag)
        except ValueError:
            return f"schema id header {self.header} is not an id"
        try:
            version = self.resolve(schema_id)
        except UnknownId:
            return f"schema id {schema_id} is not in the registry"
        if version.name != self.expected:
            return f"schema id {schema_id} is {version.name} v{version.version}, not {self.expected}"
        if schema_id not in self._validators:  # the dialect its $schema names
            self._validators[schema_id] = jsonschema.validators.validator_for(version.schema)(version.schema)
        validator = self._validators[schema_id]
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the record"
            return f"does not match {version.name} v{version.version} at {where}: {error.message}"[:300]
        return None

    def check_raw(self, headers: Sequence[tuple[str, bytes]] | None, raw: bytes) -> str | None:
        """reason() of a value still in bytes (one that passed the reading contract, so
        it is JSON)."""
        if self.tag_of(headers) is None:
            return None
        return self.reason(headers, json.loads(raw))


def registry_resolver(registry, expected: str) -> Callable[[int], Version]:
    """resolve() through a kafka_patterns.clients.registry.Registry, cached per id (an id's
    content never changes). Of two artifacts with the same content, the expected one."""
    cache: dict[int, Version] = {}

    def resolve(schema_id: int) -> Version:
        if schema_id not in cache:
            found = registry.versions_of_id(schema_id)
            if not found:
                raise UnknownId(schema_id)
            name, number = next(((n, v) for n, v in found if n == expected), found[0])
            cache[schema_id] = Version(name, number, registry.schema_by_id(schema_id))
        return cache[schema_id]
    return resolve


def for_topic(topic: str) -> SchemaCheck | None:
    """The check of the records of a catalogue topic against the registry, as the
    reader user; None when the topic declares no schema or no registry is configured
    (then the reading contract alone judges)."""
    from kafka_patterns.clients import registry
    from kafka_patterns.config import catalogue

    expected = catalogue.schema_of(topic)
    reg = registry.configured("reader") if expected else None
    if reg is None:
        return None
    return SchemaCheck(expected, registry.VALUE_ID_HEADER, registry_resolver(reg, expected), registry.decode_id)

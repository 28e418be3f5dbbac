"""The record schemas: JSON Schema files kept in the repository, every version of each
(catalogue/schemas/<name>/v<N>.json), declared in the catalogue (`schemas:`) and named
by the topics that carry them (`topics[].schema`).

A schema evolves under its declared compatibility. BACKWARD, the only level used here,
as a schema registry means it: a reader of the new version reads every record the
previous version accepted, so consumers upgrade first and old records stay readable.
The schemas are JSON Schema draft-07 (the newest dialect whose compatibility the
registry, Apicurio 3, can judge) and closed (additionalProperties: false): adding an
optional field is then compatible, as old records never carry it. In an open object it
would not be (an old record may carry that field with any value), and the registry
refuses it. An old reader reads a newer version's records by the schema their tag names
(kafka_patterns.runtime.schema_check).

`python -m kafka_patterns.config.schemas` checks every version against the one before it (CI
runs it through tests/unit/test_record_schemas.py); `--proposed FILE --schema NAME`
judges a change before it is made a version. The registry checks the same again when a
version is registered (kafka_patterns.clients.registry sync, run by make up). The check here is
structural, over the keywords these schemas use: a keyword it cannot judge counts as a
break, so an unknown change is refused rather than let through.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from kafka_patterns.config import catalogue

SCHEMAS_DIR = catalogue.DECLARATIONS_DIR / "schemas"
DIALECT = "http://json-schema.org/draft-07/schema#"
# Keywords that only annotate or structure a schema: they accept nothing by themselves.
ANNOTATIONS = {"$schema", "$id", "$defs", "definitions", "$comment", "title", "description", "default", "examples"}
# The keywords the check below judges; any other one is a change it cannot vouch for.
JUDGED = {"type", "properties", "required", "additionalProperties", "minimum", "maximum",
          "minLength", "maxLength", "pattern", "enum", "$ref"}


class SchemaError(ValueError):
    """A schema file is missing, invalid or not a compatible next version; the message
    names the file."""


@dataclass(frozen=True)
class Schema:
    name: str
    compatibility: str
    versions: tuple[dict[str, Any], ...]  # v1 first

    @property
    def latest(self) -> dict[str, Any]:
        return self.versions[-1]

    def file(self, version: int) -> Path:
        return version_file(self.name, version)


def version_file(name: str, version: int) -> Path:
    return SCHEMAS_DIR / name / f"v{version}.json"


def read_version(path: Path) -> dict[str, Any]:
    """One schema file, checked to be a valid JSON Schema of DIALECT."""
    try:
        schema = json.loads(path.read_text())
    except FileNotFoundError:
        raise SchemaError(f"{path}: no such schema file") from None
    except ValueError as e:
        raise SchemaError(f"{path}: not JSON ({e})") from None
    if schema.get("$schema") != DIALECT:
        raise SchemaError(f"{path}: $schema must be {DIALECT} (the dialect the registry judges)")
    try:
        jsonschema.Draft7Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise SchemaError(f"{path}: not a valid JSON Schema: {e.message}") from None
    return schema


@cache
def declared() -> dict[str, Schema]:
    """The catalogue's schemas, every version read from its file (v1..vN, no gaps)."""
    out = {}
    for entry in catalogue.load().get("schemas", []):
        name = entry["name"]
        files = sorted(SCHEMAS_DIR.joinpath(name).glob("v*.json"), key=lambda p: int(p.stem[1:]))
        expected = [version_file(name, n) for n in range(1, len(files) + 1)]
        if not files or files != expected:
            raise SchemaError(f"{SCHEMAS_DIR / name}: versions must be v1.json, v2.json, ... without gaps "
                              f"(found: {', '.join(p.name for p in files) or 'none'})")
        out[name] = Schema(name, entry["compatibility"], tuple(read_version(p) for p in files))
    return out


def validator(name: str, version: int | None = None) -> jsonschema.Draft7Validator:
    """A validator of a declared schema's version (the latest by default)."""
    schema = declared()[name]
    return jsonschema.Draft7Validator(schema.latest if version is None else schema.versions[version - 1])


# --- BACKWARD compatibility: does `new` accept every value `old` accepts? -------------

def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A local $ref ("#/$defs/name") replaced by what it points at, merged with the
    node's other keywords."""
    ref = node.get("$ref")
    if ref is None:
        return node
    if not ref.startswith("#/"):
        raise SchemaError(f"only local references are supported, not {ref!r}")
    target: Any = root
    for part in ref[2:].split("/"):
        target = target[part]
    return {**_resolve(target, root), **{k: v for k, v in node.items() if k != "$ref"}}


def _types(node: dict[str, Any]) -> set[str] | None:
    t = node.get("type")
    return None if t is None else {t} if isinstance(t, str) else set(t)


def _covers(new: set[str] | None, old: set[str] | None) -> bool:
    if new is None:
        return True
    if old is None:
        return False
    widened = new | ({"integer"} if "number" in new else set())
    return old <= widened


def _bound_breaks(old: dict, new: dict, where: str) -> list[str]:
    """A lower bound raised or an upper bound lowered refuses values old accepted."""
    breaks = []
    for low in ("minimum", "minLength"):
        if new.get(low, -math.inf) > old.get(low, -math.inf):
            breaks.append(f"{where}: {low} raised to {new[low]}")
    for high in ("maximum", "maxLength"):
        if new.get(high, math.inf) < old.get(high, math.inf):
            breaks.append(f"{where}: {high} lowered to {new[high]}")
    return breaks


def backward_breaks(old: dict[str, Any], new: dict[str, Any], where: str = "$",
                    old_root: dict | None = None, new_root: dict | None = None) -> list[str]:
    """Why a reader of `new` may refuse a value `old` accepts; [] when it cannot.
    A property added to a closed object is compatible (no old value has it); added to
    an open one it is not (an old value may have it, with any value)."""
    old_root, new_root = old_root or old, new_root or new
    old, new = _resolve(old, old_root), _resolve(new, new_root)
    breaks = [f"{where}: cannot judge keyword {k!r}" for k in sorted(set(new) - ANNOTATIONS - JUDGED)]
    if not _covers(_types(new), _types(old)):
        breaks.append(f"{where}: type {new.get('type')} does not take {old.get('type', 'any type')}")
    breaks += _bound_breaks(old, new, where)
    if "pattern" in new and new["pattern"] != old.get("pattern"):
        breaks.append(f"{where}: pattern changed to {new['pattern']!r}")
    if "enum" in new and not set(map(json.dumps, old.get("enum", [None, "any"]))) <= set(map(json.dumps, new["enum"])):
        breaks.append(f"{where}: enum does not keep every value the old version allows")
    for field in sorted(set(new.get("required", [])) - set(old.get("required", []))):
        breaks.append(f"{where}: {field} became required")
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for field in sorted(old_props.keys() & new_props.keys()):
        breaks += backward_breaks(old_props[field], new_props[field], f"{where}.{field}", old_root, new_root)
    if old.get("additionalProperties") is not False:
        breaks += [f"{where}.{f}: added to an open object (an old value may carry it with any value)"
                   for f in sorted(new_props.keys() - old_props.keys()) if new_props[f] not in ({}, True)]
    if new.get("additionalProperties") is False:
        if old.get("additionalProperties") is not False:
            breaks.append(f"{where}: closed to other fields (additionalProperties: false)")
        breaks += [f"{where}.{f}: removed from a closed object" for f in sorted(old_props.keys() - new_props.keys())]
    return breaks


def check_chain(schema: Schema) -> list[str]:
    """Every version against the one before it, under the schema's compatibility."""
    if schema.compatibility != "BACKWARD":
        raise SchemaError(f"schema {schema.name}: compatibility {schema.compatibility} is not checked here")
    problems = []
    for n in range(2, len(schema.versions) + 1):
        problems += [f"{schema.file(n)}: not BACKWARD compatible with v{n - 1}: {b}"
                     for b in backward_breaks(schema.versions[n - 2], schema.versions[n - 1])]
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafka_patterns.config.schemas", description=__doc__.split("\n\n")[0])
    p.add_argument("--schema", help="the declared schema a proposed version is for")
    p.add_argument("--proposed", type=Path, help="a candidate next version, judged against the latest")
    args = p.parse_args(argv)
    try:
        schemas = declared()
        if args.proposed:
            if args.schema not in schemas:
                p.error(f"--schema must name a declared schema: {', '.join(schemas)}")
            breaks = backward_breaks(schemas[args.schema].latest, read_version(args.proposed))
            problems = [f"{args.proposed}: not BACKWARD compatible with the latest {args.schema}: {b}"
                        for b in breaks]
        else:
            problems = [problem for s in schemas.values() for problem in check_chain(s)]
    except SchemaError as e:
        problems = [str(e)]
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(schemas)} schemas, {sum(len(s.versions) for s in schemas.values())} versions: compatible")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

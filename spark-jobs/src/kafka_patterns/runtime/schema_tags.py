"""The Spark jobs' check of a record's schema tag: what kafka_patterns.runtime.schema_check does
for the client jobs, as Spark column expressions (spark.parse_readings adds them to the
reading contract's `error`), with the same reasons as far as a column can give them.

A streaming query may run in Spark's real-time mode, which takes no Python UDF and no
per-batch driver code, so the registry cannot be asked per record. The driver asks it
once per process instead (known_ids: every version registered in the group, the
property names of each closed schema a catalogue topic carries) and the answer goes
into the query's plan as map literals.

An id registered after that (a producer of a new schema version started while the job
runs) is not in the plan: its records are dead-lettered, the reason saying the id was
not in the registry as of the job's start, rather than passed unchecked, or failing the
query, which would restart-loop on a record whose id is truly unknown. A query's plan is
fixed when it starts, so a restart of the job refreshes the ids; then the id's records
are read, and `make replay-dlq REASON=...` sends back those lettered meanwhile (a letter
keeps no tag, so the reading contract judges it). Registering a version before its
producers start (make up's registry sync) avoids both.
"""

from __future__ import annotations

import functools
import urllib.parse
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from kafka_patterns.clients import registry
from kafka_patterns.config import catalogue


@dataclass(frozen=True)
class KnownIds:
    """What a job knows of schema ids. topics: catalogue topic -> the schema it carries
    (topics without one are not checked); versions: id -> every (schema, version)
    registered with that content (one, unless two artifacts share a schema);
    properties: id -> the property names its schema allows, for the closed schemas
    (additionalProperties false) of the topics."""
    topics: dict[str, str]
    versions: dict[int, list[tuple[str, int]]]
    properties: dict[int, list[str]]


def catalogue_topics() -> dict[str, str]:
    return {t["name"]: t["schema"] for t in catalogue.load()["topics"] if t.get("schema")}


def resolve(reg: registry.Registry, topics: dict[str, str]) -> KnownIds:
    """Ask the registry for every version of its group, and the schema of each version
    a topic carries."""
    found, page = [], 500
    while True:
        status, answer = reg.call("GET", f"/search/versions?groupId={urllib.parse.quote(reg.group, safe='')}"
                                         f"&offset={len(found)}&limit={page}")
        if status != 200:
            raise registry.RegistryError(f"listing the schema versions of group {reg.group}: HTTP {status}")
        found += answer["versions"]
        if len(answer["versions"]) < page:
            break
    versions: dict[int, list[tuple[str, int]]] = {}
    for v in sorted(found, key=lambda v: (v["artifactId"], int(v["version"]))):
        versions.setdefault(int(v["contentId"]), []).append((v["artifactId"], int(v["version"])))
    carried = set(topics.values())
    properties = {}
    for schema_id, of in versions.items():
        if any(name in carried for name, _ in of):
            schema = reg.schema_by_id(schema_id)
            if schema.get("additionalProperties") is False:
                properties[schema_id] = sorted(schema.get("properties", {}))
    return KnownIds(topics, versions, properties)


@functools.cache
def known_ids() -> KnownIds | None:
    """The registry's ids as this process first found them (see the module's doc for
    why not again); None where no registry is configured (no tag is checked then)."""
    reg = registry.configured("reader")
    return None if reg is None else resolve(reg, catalogue_topics())


def checked(topics: list[str]) -> bool:
    """Whether a read of these topics checks tags: a registry is configured and one of
    them carries a schema. Only then does the source read the records' headers, which
    costs a column per record (the bench's topics carry none)."""
    carried = catalogue_topics()
    return any(t in carried for t in topics) and known_ids() is not None


def _map(entries: dict, key_type: str, value_type: str) -> Column:
    """A map literal of a Python dict (values: scalars or lists of strings)."""
    if not entries:
        return F.lit(None).cast(f"map<{key_type},{value_type}>")
    return F.create_map(*[c for k, v in entries.items()
                          for c in (F.lit(k).cast(key_type),
                                    (F.array(*map(F.lit, v)) if isinstance(v, list) else F.lit(v)).cast(value_type))])


def tag_errors(error: Column, known: KnownIds) -> Column:
    """`error` (a when-chain over the record's `value`) extended with the checks of the
    record's tag (its `headers`, `topic`): the reasons of SchemaCheck.reason. The value is
    only held to its version's declared properties (a closed schema); its fields' kinds
    and ranges are the reading contract's."""
    # No higher-order functions (filter, transform): Spark does not compile them, and one
    # such expression would take the whole projection out of whole-stage code generation.
    # The first such header, as SchemaCheck.tag_of (index -1 when there is none: null).
    at = F.array_position(F.col("headers.key"), registry.VALUE_ID_HEADER) - 1
    tag = F.get(F.col("headers.value"), at.cast("int"))
    expected = _map(known.topics, "string", "string")[F.col("topic")]
    checked = tag.isNotNull() & expected.isNotNull()
    # 8 bytes, big-endian, signed (registry.encode_id); conv to base -10 reads them signed.
    schema_id = F.conv(F.hex(tag), 16, -10).cast("bigint")
    names = _map({i: f"{n} v{v}" for i, ((n, v), *_) in known.versions.items()}, "bigint", "string")[schema_id]
    version = _map({f"{n}@{i}": v for i, of in known.versions.items() for n, v in of},
                   "string", "int")[F.concat(expected, F.lit("@"), schema_id.cast("string"))]
    allowed = _map(known.properties, "bigint", "array<string>")[schema_id]
    # The document's own key order, as jsonschema names them.
    extra = F.array_except(F.expr("json_object_keys(cast(value as string))"), allowed)
    unexpected = F.concat(F.lit("'"), F.array_join(extra, "', '"), F.lit("'"),
                          F.when(F.size(extra) == 1, F.lit(" was")).otherwise(F.lit(" were")))
    return (error
            .when(checked & (F.octet_length(tag) != 8),
                  F.lit(f"schema id header {registry.VALUE_ID_HEADER} is not an id"))
            .when(checked & names.isNull(),
                  F.concat(F.lit("schema id "), schema_id, F.lit(" is not in the registry (as of this job's start)")))
            .when(checked & version.isNull(),
                  F.concat(F.lit("schema id "), schema_id, F.lit(" is "), names, F.lit(", not "), expected))
            .when(checked & allowed.isNotNull() & (F.size(extra) > 0),
                  F.left(F.concat(F.lit("does not match "), expected, F.lit(" v"), version,
                                  F.lit(" at the record: Additional properties are not allowed ("), unexpected,
                                  F.lit(" unexpected)")), F.lit(300))))

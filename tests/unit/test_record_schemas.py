"""The record schemas (kafka_patterns.config.schemas): every declared schema's versions are
files that are valid JSON Schemas and BACKWARD compatible, each with the one before it
(the check CI runs on every schema change); the compatibility check refuses each kind
of breaking change and accepts the compatible ones; and the reading schema judges the
reading contract's cases as the contract does."""

import copy
import json

import pytest

from kafka_patterns.config import catalogue, schemas
from kafka_patterns.runtime import readings
from pattern_harness import bad_input


def test_every_declared_schema_is_a_compatible_chain_of_versions(capsys):
    assert schemas.main([]) == 0, capsys.readouterr().err
    assert "compatible" in capsys.readouterr().out


def test_a_schema_in_another_dialect_is_refused_naming_the_file_and_the_dialect(tmp_path):
    other = tmp_path / "v1.json"
    other.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}))
    with pytest.raises(schemas.SchemaError, match=r"v1\.json: \$schema must be http://json-schema.org/draft-07"):
        schemas.read_version(other)


def test_every_topic_schema_is_declared_and_has_a_file():
    named = {t["schema"] for t in catalogue.load()["topics"] if "schema" in t}
    assert named and named <= schemas.declared().keys()
    for name in named:
        assert schemas.version_file(name, 1).is_file()


def test_an_undeclared_topic_schema_is_refused_naming_the_key():
    data = copy.deepcopy(catalogue.load())
    data["topics"][0]["schema"] = "no-such-schema"
    with pytest.raises(catalogue.CatalogueError, match=r"topics\.smoke\.records\.schema: 'no-such-schema'"):
        catalogue.validate(data)


READING = schemas.declared()["reading"].versions[0]
PRESSURE = {"type": "number", "minimum": 870, "maximum": 1085}


def changed(change, base: dict = READING) -> dict:
    new = copy.deepcopy(base)
    change(new)
    return new


def test_reading_v2_adds_an_optional_field_and_reads_every_v1_record():
    v1, v2 = schemas.validator("reading", 1), schemas.validator("reading", 2)
    record = json.loads(bad_input.cases("r1")[0][1])
    assert v1.is_valid(record) and v2.is_valid(record)
    assert v2.is_valid(record | {"pressure": 1013.2}) and not v1.is_valid(record | {"pressure": 1013.2})
    assert schemas.backward_breaks(READING, schemas.declared()["reading"].latest) == []


def test_an_optional_field_added_to_an_open_object_is_a_break():
    opened = changed(lambda s: s.pop("additionalProperties"))
    breaks = schemas.backward_breaks(opened, changed(lambda s: s["properties"].update(pressure=PRESSURE), opened))
    assert breaks == ["$.pressure: added to an open object (an old value may carry it with any value)"]


def test_widening_a_range_or_a_type_is_compatible():
    new = changed(lambda s: s["properties"].update(
        temperature={"type": "number", "minimum": -90, "maximum": 70},
        seq={"type": "number", "minimum": 0}))
    assert schemas.backward_breaks(READING, new) == []


BREAKING = {
    "a new required field": lambda s: (s["properties"].update(pressure=PRESSURE), s["required"].append("pressure")),
    "a narrower type": lambda s: s["properties"]["temperature"].update(type="integer"),
    "another type": lambda s: s["properties"]["seq"].update(type="string"),
    "a raised minimum": lambda s: s["properties"]["humidity"].update(minimum=10),
    "a lowered maximum": lambda s: s["properties"]["temperature"].update(maximum=50),
    "a shorter string": lambda s: s["properties"]["sensor"].update(maxLength=16),
    "a shorter string, through a reference": lambda s: (
        s.update(definitions={"name": {"type": "string", "maxLength": 16}}),
        s["properties"].update(station={"$ref": "#/definitions/name"})),
    "a changed pattern": lambda s: s["properties"]["run"].update(pattern="^[a-z0-9-]*$"),
    "a removed field": lambda s: s["properties"].pop("humidity"),
    "an enum where any value was allowed": lambda s: s["properties"]["station"].update(enum=["station-0"]),
    "a keyword the check cannot judge": lambda s: s["properties"]["humidity"].update(multipleOf=0.5),
}


@pytest.mark.parametrize("change", BREAKING.values(), ids=BREAKING.keys())
def test_a_breaking_change_is_refused_with_where_and_why(change):
    breaks = schemas.backward_breaks(READING, changed(change))
    assert breaks and all(b.startswith("$") for b in breaks)


def test_the_command_refuses_a_breaking_proposal_naming_the_file_and_the_break(tmp_path, capsys):
    proposed = tmp_path / "v2.json"
    proposed.write_text(json.dumps(changed(BREAKING["a new required field"])))
    assert schemas.main(["--schema", "reading", "--proposed", str(proposed)]) == 1
    assert f"{proposed}: not BACKWARD compatible with the latest reading: $: pressure became required" \
        in capsys.readouterr().err
    proposed.write_text(json.dumps(changed(lambda s: s["properties"].update(pressure=PRESSURE))))
    assert schemas.main(["--schema", "reading", "--proposed", str(proposed)]) == 0


def test_an_invalid_schema_file_is_refused_naming_it(tmp_path):
    bad = tmp_path / "v9.json"
    bad.write_text(json.dumps({"$schema": schemas.DIALECT, "type": "objekt"}))
    with pytest.raises(schemas.SchemaError, match=r"v9\.json: not a valid JSON Schema"):
        schemas.read_version(bad)


# The contract's rules below the schema's level: how the bytes are encoded (size, UTF-8,
# strict JSON without NaN or duplicate keys) and that an integer is written without a
# fraction (JSON Schema counts 7.0 as an integer; Spark would not read it as a bigint).
ENCODING_RULES = {"larger than 4096 bytes", "not UTF-8", "not JSON", "seq is not an integer",
                  "ts is not an integer", "empty value"}
# The contract is open to other fields (it judges untagged records of any producer); a
# version's schema is closed (a record tagged with it has exactly its fields).
OPEN_CONTRACT = {"valid with an extra field", "valid, nested 64 levels deep", "valid with 1,000 escapes in a string"}


@pytest.mark.parametrize("case,value,reason", bad_input.cases("r1"), ids=[c[0] for c in bad_input.cases("r1")])
def test_the_reading_schema_judges_each_contract_case_as_the_contract_does(case, value, reason):
    try:
        record = json.loads(value)
    except (TypeError, ValueError, RecursionError):
        assert reason in ENCODING_RULES
        return
    valid = schemas.validator("reading", 1).is_valid(record)
    assert valid == (reason is None) or reason in ENCODING_RULES or case in OPEN_CONTRACT, reason


def test_the_reading_schema_requires_the_contract_fields_in_its_order():
    assert tuple(READING["required"]) == readings.FIELDS

"""The example domain: weather-station readings, keyed by sensor id.

A reading is a JSON object:
    {"run": "<id of the producing run>", "sensor": "sensor-07", "station": "station-2",
     "seq": 1234, "temperature": 21.5, "humidity": 40.2, "ts": <event time, epoch ms>}
`run` + `seq` identify a record for delivery accounting (seq grows per run, so it
also grows per key). Plain Python here; the Spark schema is built on demand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

# The reading contract: one definition of a valid reading, implemented twice (parse()
# below for the client jobs, kafka_patterns.runtime.spark.parse_readings for the Spark jobs) and
# held equal by one table of cases that both must judge alike (tests/unit/test_reading_contract.py).
# The Kafka Streams peers of make bench check it a third time, in Java, with the values
# below read from here (bench.streams_peer.rules), not copied.
# A value is checked in this order, and the first failing check is its reason:
#   size (MAX_VALUE_BYTES), UTF-8, JSON, an object, every field present and not null,
#   then field by field in FIELDS order: its JSON type (KINDS), then for strings
#   1..MAX_STRING characters with no control character, for numbers RANGES.
# "JSON" is one JSON text (RFC 8259) and nothing after it but whitespace, with no
# duplicate key, no lone surrogate escape, at most MAX_DEPTH nested arrays/objects and no
# number of more than MAX_NUMBER_DIGITS digits: each parser alone would let something
# else through (Spark's ignores what follows the first value; Python's takes lone
# surrogates, numbers of any length and overflows its stack on deep nesting).
KINDS = {"run": "string", "sensor": "string", "station": "string", "seq": "integer",
         "temperature": "number", "humidity": "number", "ts": "integer"}
FIELDS = tuple(KINDS)
MAX_VALUE_BYTES = 4096
MAX_STRING = 64
MAX_DEPTH = 64
# Digits of a number literal (its integer, fraction and exponent together): the limit of
# Jackson, which parses JSON for Spark (try_parse_json) and for the Kafka Streams peers.
MAX_NUMBER_DIGITS = 1000
# A JSON string literal (possessive: no backtracking), for the nesting scan; the Spark
# contract uses the same pattern (Java regex syntax agrees here).
STRING_LITERAL = r'"(?:[^"\\]++|\\.)*+"'
# Event time (epoch ms) from 2000-01-01 to 2100-01-01 UTC: a timestamp outside is an
# error of the producer, and years 0 or 100000 would not even convert to a date.
EVENT_TIME_RANGE_MS = (946_684_800_000, 4_102_444_800_000)
# Plausible physical ranges, and seq as a non-negative 64-bit integer.
TEMPERATURE_RANGE = (-60.0, 60.0)
HUMIDITY_RANGE = (0.0, 100.0)
RANGES = {"seq": (0, 2**63 - 1), "temperature": TEMPERATURE_RANGE, "humidity": HUMIDITY_RANGE,
          "ts": EVENT_TIME_RANGE_MS}


@dataclass(frozen=True)
class Reading:
    run: str
    sensor: str
    station: str
    seq: int
    temperature: float
    humidity: float
    ts: int

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @property
    def record_id(self) -> tuple[str, int]:
        return (self.sensor, self.seq)


def station_of(sensor_number: int, stations: int) -> str:
    return f"station-{sensor_number % stations}"


def _no_constants(name: str):
    raise ValueError(f"{name} is not JSON")  # json.loads would take NaN and Infinity


def _short_number(parse):
    def checked(literal: str):
        if sum(c.isdigit() for c in literal) > MAX_NUMBER_DIGITS:
            raise ValueError(f"a number of more than {MAX_NUMBER_DIGITS} digits")
        return parse(literal)
    return checked


_PARSE_INT, _PARSE_FLOAT = _short_number(int), _short_number(float)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def _kind_of(value: Any) -> str:
    """The JSON type of a decoded value, as KINDS names them: "integer" is a 64-bit
    integer written without a fraction or exponent (7.0 is a number), and a boolean is
    not a number."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        # 64-bit, as Spark holds it; a JSON integer beyond that is a (decimal) number there
        return "integer" if -(2**63) <= value < 2**63 else "number"
    if isinstance(value, float):
        return "number"
    return "object or array"


def field_error(name: str, value: Any) -> str | None:
    """Why one present, non-null field breaks the contract, or None."""
    kind, want = _kind_of(value), KINDS[name]
    if not (kind == want or (want == "number" and kind == "integer")):
        return f"{name} is not a{'n' if want == 'integer' else ''} {want}"
    if want == "string":
        if not 1 <= len(value) <= MAX_STRING:
            return f"{name} is empty or longer than {MAX_STRING} characters"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            return f"{name} has a control character"
    elif name in RANGES and not RANGES[name][0] <= value <= RANGES[name][1]:
        return f"{name} out of range"
    return None


def _nesting(text: str) -> int:
    """How deep arrays and objects nest in a JSON text (strings skipped), counted
    before decoding: json.loads recurses once per level and would raise RecursionError."""
    depth = deepest = 0
    for c in re.sub(STRING_LITERAL, "", text):
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a decoded value holds a string (key or value) with a lone surrogate, which
    json.loads makes of an unpaired \\ud800-\\udfff escape: not Unicode text."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def validate(value: bytes | str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(the decoded object, None) or (None, reason), by the contract above."""
    if value is None:
        return None, "empty value"
    raw = value.encode() if isinstance(value, str) else value
    if len(raw) > MAX_VALUE_BYTES:
        return None, f"larger than {MAX_VALUE_BYTES} bytes"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if text.count("[") + text.count("{") > MAX_DEPTH and _nesting(text) > MAX_DEPTH:
        return None, "not JSON"
    try:
        data: Any = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_keys,
                               parse_int=_PARSE_INT, parse_float=_PARSE_FLOAT)
    except ValueError:
        return None, "not JSON"
    if "\\u" in text and _has_lone_surrogate(data):
        return None, "not JSON"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    missing = [f for f in FIELDS if data.get(f) is None]
    if missing:
        return None, "missing " + ",".join(missing)
    for name in FIELDS:
        if (error := field_error(name, data[name])) is not None:
            return None, error
    return data, None


def parse(value: bytes | str | None) -> tuple[Reading | None, str | None]:
    """(reading, None) or (None, reason): never raises on bad input."""
    data, error = validate(value)
    if data is None:
        return None, error
    return Reading(data["run"], data["sensor"], data["station"], data["seq"], float(data["temperature"]),
                   float(data["humidity"]), data["ts"]), None


def spark_schema():
    """The Spark StructType of a reading (pyspark imported only by Spark jobs)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    types = {"seq": LongType(), "ts": LongType(), "temperature": DoubleType(), "humidity": DoubleType()}
    return StructType([StructField(f, types.get(f, StringType())) for f in FIELDS])


def split(messages: Iterable, schema_check=None) -> tuple[list[tuple[Any, Reading]], list[tuple[Any, str]]]:
    """Consumed records (anything with .value() and .headers()) -> ([(record, reading)],
    [(record, reason)]): the valid readings, and the others with the contract's reason,
    or the reason their schema tag gives (a schema_check.SchemaCheck), for the dead letters."""
    good, bad = [], []
    for m in messages:
        reading, reason = parse(m.value())
        if reading is not None and schema_check is not None:
            reason = schema_check.check_raw(m.headers(), m.value())
            reading = None if reason else reading
        if reading is None:
            bad.append((m, reason))
        else:
            good.append((m, reading))
    return good, bad


def totals_per_sensor(readings: Iterable[Reading]) -> dict[str, tuple[int, float, int]]:
    """Python's per-sensor (count, temperature sum, last seq) over the readings: what the
    batch and self-managed-offsets patterns must arrive at."""
    totals: dict[str, list] = {}
    for r in readings:
        t = totals.setdefault(r.sensor, [0, 0.0, -1])
        t[0], t[1], t[2] = t[0] + 1, t[1] + r.temperature, max(t[2], r.seq)
    return {s: tuple(t) for s, t in totals.items()}

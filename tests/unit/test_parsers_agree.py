"""The three implementations of the reading contract, readings.parse (client jobs),
spark.parse_readings (Spark jobs) and the Kafka Streams peers' ReadingContract (Java,
bench/streams, reading the contract's values from readings.py), give the same verdict
and reason on generated input: JSON fragments and whole readings, concatenations,
escapes, deep nesting, numbers at the edges, other encodings. Hypothesis generates the
inputs; one Spark query and one JVM judge them all."""

from __future__ import annotations

import functools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import streams_peer
from kafka_patterns.runtime import readings
from kafka_patterns.runtime import spark as kp_spark
from pattern_harness import bad_input

GENERATED = 10_000
GOOD = {"run": "r1", "sensor": "sensor-01", "station": "station-1", "seq": 7, "temperature": 21.5,
        "humidity": 40.0, "ts": bad_input.TS}

scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=70),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([0, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 946_684_800_000, 4_102_444_800_000,
                     4_102_444_800_001, -60, 60, 100, 0.0, -0.0, 1e308, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)
# Number spellings json.dumps never writes: exponents, fractions of integers, leading
# zeros and signs, out-of-range magnitudes.
number_texts = st.sampled_from(["7.0", "7e0", "1E2", "-0", "-0.0", "01", "+1", "1.", ".5", "1e400", "-1e400",
                                "1e-400", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
                                "100.000000000000000000001", "59.99999999999999999999", "NaN", "Infinity",
                                "9" * 1000, "9" * 1001, "1." + "0" * 998 + "e1", "-" + "1" * 1000 + ".5"])
# Escapes and characters at the edges of JSON strings and of UTF-8.
string_texts = st.sampled_from(['"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\u0000"', '"\\u001f"',
                                '"\\u007f"', '"a\\/b"', '"\\x41"', '"\t"', '"\x7f"', '"\\"', '"é"', '"\u2028"',
                                '""', '"' + "s" * 64 + '"', '"' + "s" * 65 + '"'])


@st.composite
def readings_with_a_raw_field(draw) -> str:
    """A reading whose one field is replaced by raw JSON text (number or string spellings,
    nested values), maybe with an extra field."""
    name = draw(st.sampled_from([*readings.FIELDS, "note"]))
    raw = draw(st.one_of(number_texts, string_texts, values.map(json.dumps)))
    text = json.dumps({**GOOD, name: "@@"}).replace('"@@"', raw)
    return text


def nested(depth: int, inner: str = "1") -> str:
    opening = "".join("[" if i % 2 else '{"k":' for i in range(depth))
    closing = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return opening + inner + closing


texts = st.one_of(
    readings_with_a_raw_field(),
    st.fixed_dictionaries({k: st.one_of(st.just(v), values) for k, v in GOOD.items()}).map(json.dumps),
    values.map(json.dumps),
    # concatenations: a reading with something after it, or before it
    st.tuples(readings_with_a_raw_field(), st.sampled_from(["", " ", "\n", " x", "{}", "[]", "1", "//c", "\x00",
                                                            json.dumps(GOOD), "\u00a0", "\r\n\t"]))
    .map("".join),
    st.tuples(st.sampled_from(["", " ", "\ufeff", "\u00a0", "x"]), readings_with_a_raw_field()).map("".join),
    # nesting around the contract's limit, as an extra field or as the whole value
    st.integers(min_value=1, max_value=130).map(
        lambda d: json.dumps({**GOOD, "note": "@@"}).replace('"@@"', nested(d))),
    st.integers(min_value=60, max_value=2000).map(lambda d: "[" * d + "]" * d),
    st.text(max_size=60),
)
encodings = st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32", "latin-1"])


@st.composite
def inputs(draw) -> bytes:
    text = draw(texts)
    try:
        raw = text.encode(draw(encodings))
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")  # lone surrogates as (invalid) UTF-8 bytes
    if draw(st.integers(0, 20)) == 0:  # a flipped byte here and there
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1:]
    return raw


@functools.cache  # the same inputs for every judge, generated once
def generated(count: int) -> list[bytes]:
    """`count` inputs from the strategies above (derandomized: the same every run)."""
    out: list[bytes] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(inputs())
    def collect(raw: bytes) -> None:
        out.append(raw)

    collect()
    return out


def test_readings_parse_never_raises_on_arbitrary_bytes():
    @settings(max_examples=3_000, derandomize=True, database=None, deadline=None)
    @given(st.binary(max_size=5000))
    def parse(raw: bytes) -> None:
        reading, reason = readings.parse(raw)
        assert (reading is None) != (reason is None)
    parse()


def test_both_parsers_give_every_generated_input_the_same_verdict_and_reason(kafka_records):
    cases = [v for _, v, _ in bad_input.cases("r1")] + generated(GENERATED)
    assert len(cases) >= GENERATED
    rows = kp_spark.parse_readings(kafka_records(cases)).select("offset", "error").orderBy("offset").collect()
    spark_says = [row.error for row in rows]
    python_says = [readings.parse(raw)[1] for raw in cases]
    disagree = [(raw[:200], p, s) for raw, p, s in zip(cases, python_says, spark_says, strict=True) if p != s]
    assert not disagree, f"{len(disagree)} of {len(cases)} inputs judged differently (input, Python, Spark): " \
                         f"{disagree[:10]}"
    # Not a vacuous agreement: the inputs reach valid readings and many kinds of refusal.
    kinds = {(reason or "valid").split(" ")[0] for reason in python_says}
    assert python_says.count(None) > GENERATED // 50 and len(kinds) > 10, sorted(kinds)


def test_the_streams_peer_gives_every_generated_input_the_python_verdict_and_reason():
    cases = [v for _, v, _ in bad_input.cases("r1")] + generated(GENERATED)
    java_says = streams_peer.contract_reasons(cases)
    python_says = [readings.parse(raw)[1] for raw in cases]
    disagree = [(raw[:200], p, j) for raw, p, j in zip(cases, python_says, java_says, strict=True) if p != j]
    assert not disagree, f"{len(disagree)} of {len(cases)} inputs judged differently (input, Python, Java): " \
                         f"{disagree[:10]}"

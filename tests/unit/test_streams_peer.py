"""bench/streams_peer.py: the rules the Kafka Streams peers read from the Python modules
(rules(), rules_file()), the Java mains refusing a rules file they cannot use, and the
`python -m bench.streams_peer verdicts` command."""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root holds bench/

from bench import streams_peer
from kafka_patterns.jobs import content_filter, pipeline
from kafka_patterns.runtime import dead_letters, readings
from pattern_harness import bad_input

JAVA = sorted((streams_peer.SOURCES / "src").rglob("*.java"))


def test_the_rules_are_the_python_modules_values():
    rules = streams_peer.rules()
    contract = rules["contract"]
    assert (contract["maxValueBytes"], contract["maxString"], contract["maxDepth"], contract["maxNumberDigits"]) == (
        readings.MAX_VALUE_BYTES, readings.MAX_STRING, readings.MAX_DEPTH, readings.MAX_NUMBER_DIGITS)
    assert contract["fields"] == list(readings.FIELDS)
    assert contract["kinds"] == readings.KINDS
    assert contract["ranges"] == {name: list(bounds) for name, bounds in readings.RANGES.items()}
    assert rules["deadLetters"] == {"headers": list(dead_letters.HEADERS), "truncation": list(dead_letters.TRUNCATION),
                                    "stored": dead_letters.STORED_HEADER, "letterBudget": dead_letters.LETTER_BUDGET,
                                    "prefixBytes": dead_letters.PREFIX_BYTES}
    assert rules["contentFilter"] == {"heatC": content_filter.HEAT_C, "frostC": content_filter.FROST_C}
    assert rules["enrich"]["profileFields"] == list(pipeline.PROFILE_FIELDS)
    assert rules["enrich"]["profileKinds"] == {"name": "string", "region": "string", "elevation_m": "number"}
    assert rules["aggregate"] == {"windowMs": pipeline.WINDOW_MS, "watermarkMs": pipeline.WATERMARK_MS}
    assert (pipeline.WINDOW, pipeline.WATERMARK) == ("10 seconds", "60 seconds")  # what Spark is given


def test_the_rules_file_round_trips_and_is_named_after_its_content(tmp_path, monkeypatch):
    monkeypatch.setattr(streams_peer, "CACHE", tmp_path)
    path = streams_peer.rules_file()
    assert path.parent == tmp_path and path.name.startswith("rules-")
    back = json.loads(path.read_text())
    assert back == streams_peer.rules()
    seq, temperature = back["contract"]["ranges"]["seq"], back["contract"]["ranges"]["temperature"]
    assert seq[1] == 2**63 - 1 and type(seq[1]) is int  # a Java long, exactly
    assert all(type(bound) is float for bound in temperature)  # Java doubles
    written = path.stat().st_mtime_ns
    assert streams_peer.rules_file() == path and path.stat().st_mtime_ns == written  # not written again
    changed = streams_peer.rules()
    changed["contract"]["maxString"] += 1
    monkeypatch.setattr(streams_peer, "rules", lambda: changed)
    other = streams_peer.rules_file()
    assert other != path and json.loads(other.read_text()) == changed
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, other.name])  # no partial file left


def test_the_java_code_holds_no_copy_of_the_rules():
    # Names where the rules are used (other classes name a reading's fields as the Spark
    # code they stand beside does: "temperature", "region"), numbers anywhere.
    rules = streams_peer.rules()
    java = {p.name: p.read_text() for p in JAVA}
    letters = rules["deadLetters"]
    names = {"ReadingContract.java": rules["contract"]["fields"],
             "DeadLetters.java": [*letters["headers"], *letters["truncation"], letters["stored"]],
             "Stages.java": [*letters["headers"], *letters["truncation"], letters["stored"],
                             *rules["enrich"]["profileFields"]]}
    for file, held in names.items():
        assert not [name for name in held if f'"{name}"' in java[file]], file
    text = "\n".join(java.values()).replace("_", "")  # 10_000 as 10000
    numbers = [rules["contract"][k] for k in ("maxValueBytes", "maxNumberDigits")]
    numbers += [bound for bounds in rules["contract"]["ranges"].values() for bound in bounds]
    numbers += [letters["letterBudget"], letters["prefixBytes"], *rules["contentFilter"].values(),
                *rules["aggregate"].values()]
    for n in numbers:
        if isinstance(n, float) and n != 0:
            assert not re.search(rf"(?<![\w.]){re.escape(repr(abs(n)))}", text), n
        elif isinstance(n, int) and abs(n) >= 100:
            assert not re.search(rf"(?<![\w.]){abs(n)}L?(?![\w.])", text), n
    assert "Long.MAX_VALUE" not in "\n".join(java.values())  # seq's bound


def _contract_check(rules_path: Path) -> subprocess.CompletedProcess:
    cmd = [*streams_peer.java_command("kafkapatterns.streams.ContractCheck", "-Xmx64M"), "--rules", str(rules_path)]
    return subprocess.run(cmd, input="-\n", capture_output=True, text=True, timeout=120, check=False)


def _without(rules: dict, dotted: str) -> dict:
    *parents, last = dotted.split(".")
    part = rules
    for key in parents:
        part = part[key]
    del part[last]
    return rules


@pytest.mark.parametrize("content,named", [
    (None, "cannot be read"),
    ("{not json", "cannot be read as JSON"),
    (json.dumps(_without(streams_peer.rules(), "contract.maxDepth")), "no key contract.maxDepth"),
    (json.dumps(_without(streams_peer.rules(), "deadLetters.letterBudget")), "no key deadLetters.letterBudget"),
], ids=["missing", "malformed", "no-contract-key", "no-letters-key"])
def test_contract_check_refuses_a_rules_file_it_cannot_use_naming_the_key_and_the_file(tmp_path, content, named):
    path = tmp_path / "rules.json"
    if content is not None:
        path.write_text(content)
    done = _contract_check(path)
    assert done.returncode == 2 and not done.stdout, done.stderr
    assert str(path) in done.stderr and named in done.stderr, done.stderr


def test_the_peer_refuses_a_rules_file_of_the_wrong_type_before_anything_else(tmp_path):
    rules = streams_peer.rules()
    rules["aggregate"]["windowMs"] = "10 seconds"
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    cmd = [*streams_peer.java_command("kafkapatterns.streams.Peer", "-Xmx64M"), "--stage", "aggregate",
           "--rules", str(path), "--config", str(tmp_path / "absent.properties")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert f"rules file {path}: aggregate.windowMs must be a 64-bit integer" in done.stderr


def test_the_verdicts_command_prints_the_java_contracts_reason_per_line(monkeypatch, capsys):
    (valid,) = [value for case, value, reason in bad_input.cases("r1") if case == "valid"]
    lines = [base64.b64encode(valid).decode(), "-", base64.b64encode(b"{not json").decode()]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    assert streams_peer.main(["verdicts"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out == [{"reason": None}, {"reason": "empty value"}, {"reason": "not JSON"}]

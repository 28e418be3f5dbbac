"""Helpers shared by the test tiers (fixtures live in conftest.py)."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCAL_INVENTORY = ROOT / "ansible" / "inventories" / "local"
VENV_BIN = Path(sys.executable).parent


def ansible_env() -> dict[str, str]:
    return {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible" / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
            "PATH": str(VENV_BIN) + os.pathsep + os.environ.get("PATH", "")}


def run_playbook(playbook: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """ansible-playbook against the local inventory, output captured for assertions."""
    cmd = [str(VENV_BIN / "ansible-playbook"), "-i", str(LOCAL_INVENTORY),
           str(ROOT / "ansible" / "playbooks" / playbook), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ansible_env(), cwd=ROOT)


def parse_properties(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def reading(seq: int, sensor: str = "sensor-01", temperature: float = 20.0, run: str = "r1",
            ts: int = 1_767_225_600_000, **extra) -> dict:
    """A valid reading as the generator writes it."""
    return {"run": run, "sensor": sensor, "station": "station-1", "seq": seq, "temperature": temperature,
            "humidity": 50.0, "ts": ts, **extra}


class FakeMessage:
    """A stand-in for confluent_kafka.Message in unit tests of the client jobs."""

    def __init__(self, value: bytes, partition: int = 0, offset: int = 0, delivery_count: int = 1,
                 headers: list[tuple[str, bytes | None]] | None = None):
        self._v, self._p, self._o, self._n, self._h = value, partition, offset, delivery_count, headers

    def value(self) -> bytes:
        return self._v

    def partition(self) -> int:
        return self._p

    def offset(self) -> int:
        return self._o

    def delivery_count(self) -> int:
        return self._n

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self._h


def first_error(config: dict, timeout: float = 30):
    """The first error a Kafka client with this config meets (it must meet one), and it
    learns no metadata: the refusal checks of tests/security and tests/infra."""
    import pytest
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from kafka_patterns.clients import kafka

    errors: list = []
    admin = AdminClient({**config, "error_cb": errors.append, "log_level": 0})  # refusals are expected here

    def reported():
        admin.poll(0.5)  # the client connects at once; poll serves error_cb
        return errors

    error = kafka.wait_until(reported, timeout=timeout, what="a client error")[0]
    with pytest.raises(KafkaException):  # and it learns nothing
        admin.list_topics(timeout=2)
    return error


def jmx_reads(config: dict, sample: str) -> bool:
    """Whether the exporter reads the sample's MBean at all: with includeObjectNames, one of
    those ObjectName patterns matches it (domain glob, key=value properties, a trailing *
    for any others)."""
    patterns = config.get("includeObjectNames")
    if not patterns:
        return True
    domain, keys = re.match(r"([^<]+)<([^>]*)>", sample).groups()
    properties = dict(part.split("=", 1) for part in keys.split(", "))
    for pattern in patterns:
        pattern_domain, pattern_keys = pattern.split(":", 1)
        parts = pattern_keys.split(",")
        required = dict(part.split("=", 1) for part in parts if part != "*")
        if (fnmatch.fnmatchcase(domain, pattern_domain)
                and all(properties.get(key) == value for key, value in required.items())
                and ("*" in parts or properties.keys() == required.keys())):
            return True
    return False


def jmx_export(config: dict, sample: str) -> tuple[str, dict[str, str]] | None:
    """The JMX exporter's naming (io.prometheus.jmx.JmxCollector): the first rule whose
    pattern, wrapped as ^.*(?:pattern).*$, matches the sample wins; $n in the name and the
    labels are its groups; names are made safe ([a-zA-Z0-9:_], runs of _ squeezed) and
    lowercased when the config says so."""
    def expand(match: re.Match, template: str) -> str:
        return re.sub(r"\$(\d+)", lambda g: match.group(int(g.group(1))) or "", template)

    def safe(name: str) -> str:
        return re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9:_]", "_", name))

    if not jmx_reads(config, sample):
        return None
    for rule in config["rules"]:
        match = re.fullmatch(rf".*(?:{rule['pattern']}).*", sample)
        if match:
            name = safe(expand(match, rule["name"]))
            labels = {}
            for key, value in rule.get("labels", {}).items():
                label = safe(expand(match, str(key)))
                labels[label.lower() if config.get("lowercaseOutputLabelNames") else label] = expand(match, str(value))
            return (name.lower() if config.get("lowercaseOutputName") else name), labels
    return None


def one_run_at_a_time(pattern: str) -> pytest.MarkDecorator:
    """Mark a test that runs `pattern`: the Makefile runs a tier's tests side by side
    (pytest-xdist --dist loadgroup), and two runs of one pattern at once would share its
    jobs' own state (the exactly-once job's batch ledger, the changelog's keys, the
    pipeline's station profiles). One group runs on one worker, one test after another."""
    return pytest.mark.xdist_group(pattern)


ROLES_DIR = ROOT / "ansible" / "roles"


def role_dir(name: str) -> Path:
    """A role's folder: the roles are grouped by concern, ansible/roles/<group>/<role>."""
    found = sorted(ROLES_DIR.glob(f"*/{name}/"))
    assert len(found) == 1, f"role {name}: found {found} under {ROLES_DIR}/<group>/"
    return found[0]


def load_module(name: str, path: Path) -> ModuleType:
    """A module from a file that is not on the path (an Ansible module, a tool script).
    An Ansible module's role module_utils (roles/<role>/module_utils/<util>.py) become
    importable first as ansible.module_utils.<util>, as Ansible makes them."""
    utils = path.parent.parent / "module_utils"
    if path.parent.name == "library" and utils.is_dir():
        for util in sorted(utils.glob("*.py")):
            full_name = f"ansible.module_utils.{util.stem}"
            if full_name not in sys.modules:
                sys.modules[full_name] = load_module(full_name, util)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_day2_operation(scenario: str, what: str, records: int = 30_000):
    """One run of a day-2 operation's chaos scenario (pattern_harness.chaos) under load,
    held to what every operation promises: nothing acknowledged lost or duplicated, and,
    where the inventory runs the canary, the canary acknowledging throughout, losing
    nothing. Returns the result for the operation's own checks."""
    from pattern_harness import chaos

    result = chaos.run(scenario, records=records)
    print(f"{scenario}: acked {result.acked}, lost {result.lost}, duplicated {result.duplicated}, "
          f"failed sends {result.failed_sends}, longest stall {result.longest_stall_s} s, canary {result.canary}")
    assert result.acked >= records
    assert result.lost == 0, f"{result.lost} acknowledged records lost across {what}"
    assert result.duplicated == 0, f"{result.duplicated} duplicates despite idempotence"
    if result.canary is not None:
        assert result.canary["acked"] > 0, f"the canary acknowledged nothing during {what}: {result.canary}"
        assert result.canary["lost"] == 0 and result.canary["duplicated"] == 0, result.canary
    return result

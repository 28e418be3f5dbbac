"""The Kafka Streams peers of the Spark stages (bench/streams, Java): built with Maven
from Maven Central at the versions of catalogue/versions.yml, once per change of their
sources or pins, into .cache/streams-peer/<digest>/, and started as their own catalogue
users (streams-<stage>) on the topics of the Spark job they stand beside (PEERS). The
rules they share with the Python jobs (the reading contract, the dead letters' shape, the
content filter's thresholds, enrich's profile fields, the aggregate's window and
watermark) are not written in Java: each Java main reads them from the file rules_file()
writes (--rules), made of the Python modules that define them (rules()).

    python -m bench.streams_peer build      # prints the jar's path
    python -m bench.streams_peer verdicts   # base64 values (- for null) on stdin -> the contract's reasons

Maven goes through the mirror settings `make setup` writes (.cache/poms/settings.xml);
its output is in .run/logs/streams-peer-build.log.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import yaml

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue, credentials
from kafka_patterns.config.catalogue import ROOT, VERSIONS_FILE

SOURCES = ROOT / "bench" / "streams"
CACHE = ROOT / ".cache" / "streams-peer"
MAVEN_SETTINGS = ROOT / ".cache" / "poms" / "settings.xml"
LOG = ROOT / ".run" / "logs" / "streams-peer-build.log"
JAR = "streams-peer-0.jar"
# -D name of the pom -> key of versions.yml
PINS = {"kafka.version": "kafka_version", "jackson.version": "streams_peer_jackson_version",
        "compiler.plugin.version": "maven_compiler_plugin_version", "jar.plugin.version": "maven_jar_plugin_version",
        "dependency.plugin.version": "maven_dependency_plugin_version"}


# A peer's stage -> the Spark job whose topics it reads and writes. Its user and its
# `job` header are streams-<stage>.
PEERS = {"clean": "pipeline-clean", "enrich": "pipeline-enrich", "content-filter": "content-filter",
         "aggregate": "pipeline-aggregate"}
RUNNING = "state RUNNING"


class BuildFailed(RuntimeError):
    """Maven could not build the peers (the log says why)."""


def pins() -> dict[str, str]:
    versions = yaml.safe_load(VERSIONS_FILE.read_text())
    return {prop: str(versions[key]) for prop, key in PINS.items()}


def digest() -> str:
    h = hashlib.sha256(json.dumps(pins(), sort_keys=True).encode())
    for path in sorted(p for p in SOURCES.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(SOURCES)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build() -> Path:
    """The peers' jar, built when its sources or pins changed; its libs/ beside it."""
    out = CACHE / digest()
    jar = out / JAR
    if jar.is_file():
        return jar
    if not MAVEN_SETTINGS.is_file():
        raise BuildFailed(f"{MAVEN_SETTINGS} does not exist: run `make setup` (it writes Maven's mirror settings)")
    # A build directory of its own: test workers may build at once; the first to finish wins.
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{out.name}.", dir=CACHE))
    cmd = ["mvn", "-B", "-ntp", "-Dstyle.color=never", "-s", str(MAVEN_SETTINGS), "-f", str(SOURCES / "pom.xml"),
           *(f"-D{prop}={version}" for prop, version in pins().items()), f"-Dbuild.dir={partial}", "package"]
    LOG.parent.mkdir(parents=True, exist_ok=True)
    try:
        with LOG.open("w") as log:
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False, timeout=900)
        if done.returncode != 0:
            raise BuildFailed(f"mvn package of {SOURCES} failed (exit {done.returncode}): see {LOG}")
        with contextlib.suppress(OSError):  # another worker's build is there already
            partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return jar


def rules() -> dict:
    """The rules the Java peers share with the Python jobs, as their Python modules define
    them, for the peers to read (--rules) rather than hold copies of their own: a rule
    changed in Python is the peers' rule too, with no Java copy to fall behind.

    - contract: the reading contract of kafka_patterns.runtime.readings (its limits, the
      fields in order, each field's JSON kind, the ranges as [lo, hi]: an integer
      field's as integers, up to seq's 2**63 - 1, a Java long exactly; a number field's
      as floats, Java doubles);
    - deadLetters: the letter's header names, truncation headers and STORED_HEADER, its
      budget and prefix (kafka_patterns.runtime.dead_letters);
    - contentFilter: the heat and frost thresholds of jobs.content_filter (°C);
    - enrich: jobs.pipeline's PROFILE_FIELDS in the order written, and each one's JSON
      kind as pipeline.profile_schema types it;
    - aggregate: jobs.pipeline's window and watermark, in ms.

    Plain JSON values only (lists, not tuples), so it equals its file read back."""
    from pyspark.sql.types import DoubleType, StringType

    from kafka_patterns.jobs import content_filter, pipeline
    from kafka_patterns.runtime import dead_letters, readings

    profile_types = {f.name: f.dataType for f in pipeline.profile_schema().fields}

    def kind(data_type) -> str:
        if isinstance(data_type, StringType):
            return "string"
        if isinstance(data_type, DoubleType):  # to_json writes a double, as Java does
            return "number"
        raise ValueError(f"pipeline.profile_schema: no JSON kind for {data_type}")

    return {
        "contract": {"maxValueBytes": readings.MAX_VALUE_BYTES, "maxString": readings.MAX_STRING,
                     "maxDepth": readings.MAX_DEPTH, "maxNumberDigits": readings.MAX_NUMBER_DIGITS,
                     "fields": list(readings.FIELDS), "kinds": dict(readings.KINDS),
                     "ranges": {name: list(bounds) for name, bounds in readings.RANGES.items()}},
        "deadLetters": {"headers": list(dead_letters.HEADERS), "truncation": list(dead_letters.TRUNCATION),
                        "stored": dead_letters.STORED_HEADER, "letterBudget": dead_letters.LETTER_BUDGET,
                        "prefixBytes": dead_letters.PREFIX_BYTES},
        "contentFilter": {"heatC": content_filter.HEAT_C, "frostC": content_filter.FROST_C},
        "enrich": {"profileFields": list(pipeline.PROFILE_FIELDS),
                   "profileKinds": {name: kind(profile_types[name]) for name in pipeline.PROFILE_FIELDS}},
        "aggregate": {"windowMs": pipeline.WINDOW_MS, "watermarkMs": pipeline.WATERMARK_MS},
    }


def rules_file() -> Path:
    """rules() as a JSON file, .cache/streams-peer/rules-<hash of its content>.json:
    written when no file holds this content yet (a change of a rule is a new file), to a
    temporary file first and renamed, as test workers may write it at once."""
    text = json.dumps(rules(), indent=1, sort_keys=True) + "\n"
    path = CACHE / f"rules-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if path.is_file() and path.read_text() == text:
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f"{path.stem}.", suffix=".partial", dir=CACHE)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    return path


def java_command(main_class: str, *jvm_args: str) -> list[str]:
    jar = build()
    return ["java", *jvm_args, "-cp", f"{jar}:{jar.parent / 'libs'}/*", main_class]


def user(stage: str) -> str:
    return f"streams-{stage}"


def peer_args(stage: str, run: str) -> list[str]:
    """The peer's arguments: its Spark job's topics from the catalogue, its user's client
    properties, an application id of this run started at the end of its input, the
    rules file."""
    job = catalogue.job(PEERS[stage])
    return ["--stage", stage, "--rules", str(rules_file()), "--config", str(credentials.java_properties(user(stage))),
            "--application-id", f"{user(stage)}-{run}", "--job", user(stage), "--input", job.inputs[0],
            *(arg for topic in job.output_topics for arg in ("--output", topic)),
            *(["--deadletter", job.deadletter] if job.deadletter else []),
            *(arg for topic in job.lookups for arg in ("--lookup", topic)),
            "--set", f"bootstrap.servers={kafka.bootstrap_servers()}", "--from-end"]


class PeerProcess:
    """A running peer: started, and ready once Kafka Streams says RUNNING; stop() sends
    SIGTERM (Streams closes cleanly) and waits. Its output is in `log`."""

    def __init__(self, stage: str, run: str, log: Path, *settings: str):
        self.stage, self.log = stage, log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._out = log.open("w")
        cmd = java_command("kafkapatterns.streams.Peer", "-Xmx512M")
        extra = [arg for setting in settings for arg in ("--set", setting)]
        self.proc = subprocess.Popen([*cmd, *peer_args(stage, run), *extra], stdout=self._out,
                                     stderr=subprocess.STDOUT)

    def wait_running(self, timeout: float = 120) -> None:
        def running() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the {self.stage} peer exited {self.proc.returncode}: {self.tail()}")
            return RUNNING in self.log.read_text()
        kafka.wait_until(running, timeout, 0.2, f"the {self.stage} peer RUNNING")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        return self.proc.returncode


def contract_reasons(values: Iterable[bytes | None]) -> list[str | None]:
    """The Java contract's reason for each value (None: a valid reading), by the rules
    of rules_file()."""
    lines = "".join((base64.b64encode(v).decode() if v is not None else "-") + "\n" for v in values)
    cmd = [*java_command("kafkapatterns.streams.ContractCheck", "-Xmx256M"), "--rules", str(rules_file())]
    done = subprocess.run(cmd, input=lines, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"ContractCheck exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return [json.loads(line)["reason"] for line in done.stdout.splitlines()]


def main(argv: list[str]) -> int:
    try:
        if argv == ["build"]:
            print(build())
            return 0
        if argv == ["verdicts"]:
            values = [None if line == "-" else base64.b64decode(line) for line in sys.stdin.read().splitlines()]
            for reason in contract_reasons(values):
                print(json.dumps({"reason": reason}))
            return 0
    except RuntimeError as e:  # BuildFailed, or ContractCheck failed
        print(e, file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The pattern catalogue and the pinned versions, loaded and validated.

Every other module gets topic names, partition counts and versions from here, so
nothing is typed twice. A catalogue error fails fast, naming the key to fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # kafka_patterns/
ROOT = PACKAGE_DIR.parent.parent.parent  # the checkout (/opt/kafka-patterns in the image)
# The declarations every path reads (the catalogue, versions, record schemas, SQL, the
# metric rules, alerts and dashboards); a job's `sql:` is relative to it.
DECLARATIONS_DIR = ROOT / "catalogue"
METRICS_DIR = DECLARATIONS_DIR / "metrics"
CATALOGUE_FILE = DECLARATIONS_DIR / "catalogue.yaml"
SCHEMA_FILE = DECLARATIONS_DIR / "catalogue.schema.json"
VERSIONS_FILE = DECLARATIONS_DIR / "versions.yml"


POSTGRES = "postgres:"  # an output written to a PostgreSQL table: postgres:<table>


class CatalogueError(ValueError):
    """The catalogue is invalid; the message names the key."""


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication_factor: int
    config: dict[str, str]


def _where(error: jsonschema.ValidationError) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".") or "(top)"


def validate(data: Any, source: str = "catalogue") -> dict[str, Any]:
    """Validate against the schema and the cross-references the schema cannot express."""
    schema = json.loads(SCHEMA_FILE.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise CatalogueError(f"{source}: {_where(e)}: {e.message}")
    topics = {t["name"] for t in data["topics"]}
    schemas = {s["name"] for s in data.get("schemas", [])}
    seen: set[str] = set()
    for t in data["topics"]:
        if t["name"] in seen:
            raise CatalogueError(f"{source}: topics: {t['name']!r} is declared twice")
        seen.add(t["name"])
        if "schema" in t and t["schema"] not in schemas:
            raise CatalogueError(f"{source}: topics.{t['name']}.schema: {t['schema']!r} is not declared under "
                                 "schemas")
        if t.get("replicationFactor", data["cluster"]["replicationFactor"]) < data["cluster"]["minInsyncReplicas"]:
            raise CatalogueError(f"{source}: topics.{t['name']}.replicationFactor is below cluster.minInsyncReplicas")
    for i, job in enumerate(data.get("jobs", [])):
        for key in ("inputs", "lookups", "state", "outputs"):
            for ref in job.get(key, []):
                if not ref.startswith(POSTGRES) and ref not in topics:
                    raise CatalogueError(f"{source}: jobs[{i}].{key}: topic {ref!r} of job {job['name']!r} "
                                         "is not declared under topics")
        if "deadletter" in job and job["deadletter"] not in topics:
            raise CatalogueError(f"{source}: jobs[{i}].deadletter: topic {job['deadletter']!r} of job "
                                 f"{job['name']!r} is not declared under topics")
        if {*job["inputs"], *job.get("lookups", [])} & {*job["outputs"], job.get("deadletter")}:
            raise CatalogueError(f"{source}: jobs[{i}]: job {job['name']!r} reads a topic it writes")
        if "kubernetes" in job and job["engine"] != "client":
            raise CatalogueError(f"{source}: jobs[{i}].kubernetes: job {job['name']!r} is a {job['engine']} job, "
                                 "which runs as a SparkApplication: only a client job has a kubernetes: entry")
        _check_state(data, i, job, source)
        if "sql" in job and not (DECLARATIONS_DIR / job["sql"]).is_file():
            raise CatalogueError(f"{source}: jobs[{i}].sql: {job['sql']!r} of job {job['name']!r} is no file "
                                 f"under {DECLARATIONS_DIR}")
    _check_patterns(data, source)
    return data


def _check_state(data: dict[str, Any], i: int, job: dict[str, Any], source: str) -> None:
    """A job's state topics are its own changelogs: compacted (the last value per key is
    the state, older ones may go), and no input, lookup or output besides."""
    config = {t["name"]: t.get("config") or {} for t in data["topics"]}
    for topic in job.get("state", []):
        if config[topic].get("cleanup.policy") != "compact":
            raise CatalogueError(f"{source}: jobs[{i}].state: topic {topic!r} of job {job['name']!r} needs "
                                 "config cleanup.policy: compact under topics (a changelog keeps the last "
                                 "value per key)")
        if topic in {*job["inputs"], *job.get("lookups", []), *job["outputs"], job.get("deadletter")}:
            raise CatalogueError(f"{source}: jobs[{i}].state: topic {topic!r} of job {job['name']!r} is also "
                                 "one of its inputs, lookups or outputs")


def _check_patterns(data: dict[str, Any], source: str) -> None:
    """Every pattern names declared jobs, every job belongs to exactly one pattern, and
    names, orders and scenarios are unique."""
    jobs = {j["name"] for j in data.get("jobs", [])}
    owner: dict[str, str] = {}
    for key in ("name", "order", "scenario"):
        values = [p[key] for p in data["patterns"]]
        twice = sorted({str(v) for v in values if values.count(v) > 1})
        if twice:
            raise CatalogueError(f"{source}: patterns: {key} {', '.join(twice)} is used twice")
    for i, pattern in enumerate(data["patterns"]):
        for job in pattern["jobs"]:
            if job not in jobs:
                raise CatalogueError(f"{source}: patterns[{i}].jobs: job {job!r} of pattern {pattern['name']!r} "
                                     "is not declared under jobs")
            if job in owner:
                raise CatalogueError(f"{source}: patterns[{i}].jobs: job {job!r} already belongs to pattern "
                                     f"{owner[job]!r}")
            owner[job] = pattern["name"]
    orphans = sorted(jobs - owner.keys())
    if orphans:
        raise CatalogueError(f"{source}: jobs {', '.join(orphans)} belong to no pattern: add each to the jobs "
                             "of one entry under patterns")


@cache
def load(path: Path = CATALOGUE_FILE) -> dict[str, Any]:
    return validate(yaml.safe_load(path.read_text()), str(path.name))


@cache
def versions(path: Path = VERSIONS_FILE) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def topics(catalogue: dict[str, Any] | None = None) -> dict[str, Topic]:
    """Topics with the cluster defaults applied, by name."""
    c = catalogue or load()
    rf = c["cluster"]["replicationFactor"]
    return {
        t["name"]: Topic(t["name"], t["partitions"], t.get("replicationFactor", rf),
                         {k: str(v) for k, v in (t.get("config") or {}).items()})
        for t in c["topics"]
    }


def schema_of(topic: str, catalogue: dict[str, Any] | None = None) -> str | None:
    """What the topic's values are (topics.<name>.schema), None when undeclared."""
    c = catalogue or load()
    return next((t.get("schema") for t in c["topics"] if t["name"] == topic), None)


def jobs(catalogue: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    c = catalogue or load()
    return {j["name"]: j for j in c.get("jobs", [])}


@dataclass(frozen=True)
class Promise:
    """What the tests and `make demo` hold a job to (catalogue jobs.<job>.promise)."""
    lost: str  # none | counted
    duplicated: str  # none | counted
    order: str  # total | per-key | none


@dataclass(frozen=True)
class Job:
    """A catalogue job, its topics named by role."""
    name: str
    engine: str  # spark | client
    module: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]  # topics, or postgres:<table>
    promise: Promise
    lookups: tuple[str, ...] = ()
    deadletter: str | None = None
    args: tuple[str, ...] = ()
    schedule: str | None = None
    transactional: bool = False
    mode: str = "micro-batch"  # or real-time (Spark's real-time mode, stateless queries)
    state: tuple[str, ...] = ()  # compacted changelog topics: written, and read back whole on start
    sql: str | None = None  # a stream defined in SQL: its query file, relative to spark-jobs/

    @classmethod
    def from_catalogue(cls, j: dict[str, Any]) -> Job:
        return cls(j["name"], j["engine"], j["module"], tuple(j["inputs"]), tuple(j["outputs"]),
                   Promise(**j["promise"]), tuple(j.get("lookups", ())), j.get("deadletter"),
                   tuple(j.get("args", ())), j.get("schedule"), bool(j.get("transactional", False)),
                   j.get("mode", "micro-batch"), tuple(j.get("state", ())), j.get("sql"))

    @property
    def stores_each_reading_once(self) -> bool:
        """Whether its sink deduplicates readings (run, sensor, seq): the readings ->
        PostgreSQL jobs keep a unique key unless their args say --no-unique-readings."""
        return self.module == "kafka_patterns.jobs.readings_to_postgres" and "--no-unique-readings" not in self.args

    @property
    def output_topics(self) -> tuple[str, ...]:
        """The outputs that are Kafka topics (not postgres:<table>)."""
        return tuple(o for o in self.outputs if not o.startswith(POSTGRES))

    @property
    def table(self) -> str:
        """The job's PostgreSQL sink table (its one output postgres:<table>)."""
        tables = [o.removeprefix(POSTGRES) for o in self.outputs if o.startswith(POSTGRES)]
        if len(tables) != 1:
            raise CatalogueError(f"{CATALOGUE_FILE.name}: jobs.{self.name}.outputs: expected one "
                                 f"{POSTGRES}<table>, found {tables}")
        return tables[0]

    @property
    def sql_file(self) -> Path:
        """The job's SQL query file (catalogue `sql`, relative to catalogue/, the catalogue's directory);
        an error for a job whose entry names none."""
        if not self.sql:
            raise CatalogueError(f"{CATALOGUE_FILE.name}: jobs.{self.name}.sql: not set; this job runs the "
                                 "SQL query that file holds")
        return DECLARATIONS_DIR / self.sql

    @property
    def deadletter_topic(self) -> str:
        """Where the job sends the records it cannot process; an error for a job whose
        catalogue entry names no `deadletter`."""
        if not self.deadletter:
            raise CatalogueError(f"{CATALOGUE_FILE.name}: jobs.{self.name}.deadletter: not set; this job "
                                 "dead-letters bad records")
        return self.deadletter


@dataclass(frozen=True)
class Pattern:
    """A catalogue pattern: its PATTERN= name, demo order, scenario module and jobs."""
    name: str
    order: int
    scenario: str  # module of pattern_harness.scenarios
    description: str
    jobs: tuple[Job, ...]
    # The failure modes its promise is tested under (services.FailureMode values): the
    # faults tier runs each (tests/faults/test_fault_matrix.py).
    faults: tuple[str, ...] = ()

    @property
    def job_names(self) -> list[str]:
        return [j.name for j in self.jobs]


@cache
def job_specs() -> dict[str, Job]:
    """The catalogue's jobs as typed specs, by name (loaded once)."""
    return {j["name"]: Job.from_catalogue(j) for j in load()["jobs"]}


def job(name: str) -> Job:
    """The spec of the catalogue job `name`; an unknown name fails naming the catalogue."""
    try:
        return job_specs()[name]
    except KeyError:
        raise CatalogueError(f"{CATALOGUE_FILE.name}: no job {name!r} under jobs (there are: "
                             f"{', '.join(job_specs())})") from None


@cache
def patterns() -> dict[str, Pattern]:
    """The catalogue's patterns by name, in demo order (loaded once)."""
    declared = sorted(load()["patterns"], key=lambda p: p["order"])
    return {p["name"]: Pattern(p["name"], p["order"], p["scenario"], p["description"],
                               tuple(job_specs()[j] for j in p["jobs"]), tuple(p.get("faults", ())))
            for p in declared}


def pattern_of_scenario(module: str) -> Pattern:
    """The pattern whose scenario is `module` (a scenario module's __name__)."""
    short = module.rsplit(".", 1)[-1]
    found = [p for p in patterns().values() if p.scenario == short]
    if not found:
        raise CatalogueError(f"{CATALOGUE_FILE.name}: no entry under patterns has scenario {short!r} "
                             f"(the module {module}): declare its pattern there")
    return found[0]

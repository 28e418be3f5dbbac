import copy
import inspect

import pytest

from kafka_patterns.config import catalogue
from kafka_patterns.config.catalogue import CatalogueError


def test_the_shipped_catalogue_is_valid(cat):
    assert catalogue.validate(copy.deepcopy(cat))
    assert len(catalogue.topics(cat)) == len(cat["topics"])


def test_every_topic_meets_the_guarantee_settings(cat):
    for t in catalogue.topics(cat).values():
        assert t.replication_factor >= cat["cluster"]["minInsyncReplicas"] + 1, t.name


def test_every_job_reads_and_writes_declared_topics(cat):
    declared = set(catalogue.topics(cat))
    for job in cat["jobs"]:
        for ref in job["inputs"] + job.get("lookups", []) + job["outputs"] + [job.get("deadletter", "postgres:")]:
            assert ref.startswith("postgres:") or ref in declared, (job["name"], ref)


def first_client_job(cat: dict) -> dict:
    return next(j for j in cat["jobs"] if j["engine"] == "client")


@pytest.mark.parametrize(
    ("mutate", "names"),
    [
        (lambda c: c["topics"][0].pop("partitions"), "topics[0]: 'partitions' is a required property"),
        (lambda c: c["topics"][1].update(partitions="six"), "topics[1].partitions"),
        (lambda c: c["cluster"].update(replicationFactor=0), "cluster.replicationFactor"),
        (lambda c: c["jobs"][0].update(engine="flink"), "jobs[0].engine"),
        (lambda c: c["jobs"][0]["promise"].update(lost="some"), "jobs[0].promise.lost"),
        (lambda c: c.update(topicz=[]), "(top): Additional properties"),
        (lambda c: c["jobs"][0].update(inputs=["no.such.topic"]), "jobs[0].inputs: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(outputs=c["jobs"][0]["inputs"]), "reads a topic it writes"),
        (lambda c: c["jobs"][0].update(deadletter="no.such.topic"), "jobs[0].deadletter: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(deadletter=c["jobs"][0]["inputs"][0]), "reads a topic it writes"),
        (lambda c: c["jobs"][0].update(lookups=["no.such.topic"]), "jobs[0].lookups: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(state=["no.such.topic"]), "jobs[0].state: topic 'no.such.topic'"),
        (lambda c: c["jobs"][0].update(state=["weather.deadletter"]), "needs config cleanup.policy: compact"),
        (lambda c: c["jobs"][0].update(state=["user.profiles"], outputs=["user.profiles"]), "is also one of its"),
        (lambda c: c["topics"].append(dict(c["topics"][0])), "declared twice"),
        (lambda c: c.pop("patterns"), "(top): 'patterns' is a required property"),
        (lambda c: c["patterns"][0]["jobs"].append("no-such-job"), "patterns[0].jobs: job 'no-such-job'"),
        (lambda c: c["patterns"][1]["jobs"].append(c["patterns"][0]["jobs"][0]), "already belongs to pattern"),
        (lambda c: c["patterns"].pop(), "belong to no pattern"),
        (lambda c: c["patterns"][1].update(order=c["patterns"][0]["order"]), "patterns: order"),
        (lambda c: c["patterns"][1].update(scenario="one_to_one"), "patterns: scenario one_to_one"),
        # How a client job runs on Kubernetes is declared with it; a Spark job has none.
        (lambda c: first_client_job(c).pop("kubernetes"), "'kubernetes' is a required property"),
        (lambda c: first_client_job(c).update(kubernetes={"replicas": 2}), ".kubernetes: Additional properties"),
        (lambda c: c["jobs"][0].update(engine="spark", kubernetes={}),
         "jobs[0].kubernetes: job 'one-to-one' is a spark"),
    ],
)
def test_a_bad_catalogue_fails_naming_the_key(cat, mutate, names):
    bad = copy.deepcopy(cat)
    mutate(bad)
    with pytest.raises(CatalogueError, match=None) as err:
        catalogue.validate(bad)
    assert names in str(err.value)


def test_versions_pin_each_platform_part_once():
    v = catalogue.versions()
    for key in ("kafka_version", "spark_version", "debezium_version", "strimzi_version", "spark_operator_version"):
        assert isinstance(v[key], str) and v[key], key


def test_every_declared_pattern_has_a_scenario_and_every_scenario_a_pattern():
    """Adding a pattern is its catalogue entry, a job module and a scenario module:
    a pattern without its scenario, or a scenario no pattern declares, fails here."""
    import importlib
    import pkgutil

    from pattern_harness import scenarios

    modules = {m.name for m in pkgutil.iter_modules(scenarios.__path__) if m.name not in ("base", "__init__")}
    declared = {p.scenario: name for name, p in catalogue.patterns().items()}
    assert sorted(set(declared) - modules) == [], "patterns whose scenario module is missing"
    assert sorted(modules - set(declared)) == [], "scenario modules no pattern declares"
    for module, name in declared.items():
        scenario = importlib.import_module(f"pattern_harness.scenarios.{module}")
        assert callable(getattr(scenario, "run", None)), f"{module} has no run()"
        assert catalogue.patterns()[name] == scenario.PATTERN


def test_patterns_are_typed_and_in_demo_order():
    patterns = list(catalogue.patterns().values())
    assert [p.order for p in patterns] == sorted(p.order for p in patterns)
    fanout = catalogue.patterns()["fan-out"]
    assert [j.name for j in fanout.jobs] == ["fanout-logger", "fanout-averager", "fanout-minmax"]
    assert all(isinstance(j.promise, catalogue.Promise) and j.inputs for j in fanout.jobs)
    assert catalogue.pattern_of_scenario("pattern_harness.scenarios.transactional").name == "exactly-once-kafka"


def test_a_job_spec_names_its_topics_by_role():
    job = catalogue.job("content-filter")
    assert job is catalogue.patterns()["content-filter"].jobs[0], "one spec per job, loaded once"
    assert (job.output_topics, job.deadletter_topic) == (("weather.alerts.heat", "weather.alerts.frost"),
                                                         "weather.deadletter")
    assert catalogue.job("one-to-one").table == "readings"


def test_a_missing_job_or_role_fails_naming_the_catalogue_key():
    with pytest.raises(CatalogueError, match=r"catalogue\.yaml: no job 'no-such-job' under jobs"):
        catalogue.job("no-such-job")
    with pytest.raises(CatalogueError, match=r"content-filter\.outputs: expected one postgres:<table>, found \[\]"):
        _ = catalogue.job("content-filter").table
    with pytest.raises(CatalogueError, match=r"jobs\.request-reply\.deadletter: not set"):
        _ = catalogue.job("request-reply").deadletter_topic


def test_every_fault_a_pattern_declares_is_one_its_scenario_injects():
    """The faults tier's matrix is the catalogue's patterns × their faults: each declared
    fault must be one the scenario can inject, sized by its FAULT_RUN; a mode that is
    not a FailureMode fails here, not in the middle of the faults tier."""
    from pattern_harness import scenarios
    from pattern_harness.job_processes import FailureMode

    for name, scenario in scenarios.modules().items():
        declared = [FailureMode(m) for m in catalogue.patterns()[name].faults]
        if not declared:
            continue
        assert set(declared) <= set(scenario.FAULTS), f"{name}: declares {declared}, injects {scenario.FAULTS}"
        assert isinstance(scenario.FAULT_RUN, dict), f"{name}: no FAULT_RUN to size its fault runs"
        assert "faults" in inspect.signature(scenario.run).parameters, f"{name}: run() takes no faults"


def test_a_continuously_running_client_pattern_is_tested_under_a_sigkill():
    """A client job runs until stopped (a Deployment on Kubernetes): a crash is its most
    common fault, so each such pattern's matrix includes sigkill."""
    for name, pattern in catalogue.patterns().items():
        # replay runs to completion on a given range (a Job on Kubernetes), not until stopped
        if any(j.engine == "client" and not j.module.endswith(".replay") for j in pattern.jobs):
            assert "sigkill" in pattern.faults, f"{name}: add sigkill to patterns.{name}.faults"

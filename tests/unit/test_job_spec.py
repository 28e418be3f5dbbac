"""A job is told which catalogue job it runs (--job NAME, else $KAFKA_PATTERNS_JOB, which
the chart sets in every pod), looks its typed spec up once and reads its catalogue args
itself; every launcher names the job."""

from __future__ import annotations

import importlib
import re
import types

import pytest

from kafka_patterns.config import catalogue, inventory
from kafka_patterns.jobs import base, client, readings_to_postgres
from pattern_harness import job_runs

RTP = readings_to_postgres.__name__
JOBS = sorted(catalogue.job_specs())


@pytest.fixture(autouse=True)
def no_job_variable(monkeypatch):
    monkeypatch.delenv(base.JOB_VARIABLE, raising=False)


def test_the_option_wins_over_the_variable(monkeypatch):
    monkeypatch.setenv(base.JOB_VARIABLE, "one-to-one")
    assert base.job_spec(["--available-now", "--job", "total-order"], RTP) == catalogue.job("total-order")
    assert base.job_spec(["--job=total-order"], RTP).name == "total-order"


def test_the_variable_alone_names_the_job(monkeypatch):
    monkeypatch.setenv(base.JOB_VARIABLE, "exactly-once")
    job = base.job_spec(["--available-now"], RTP)
    assert job == catalogue.job("exactly-once")
    assert readings_to_postgres.parser(job).parse_args(["--available-now"]).job == "exactly-once"


def test_without_either_the_job_fails_naming_both_ways_and_the_catalogue():
    with pytest.raises(SystemExit, match="no job given") as failed:
        base.job_spec([], RTP)
    message = str(failed.value)
    assert "--job NAME" in message and "KAFKA_PATTERNS_JOB" in message
    assert str(catalogue.CATALOGUE_FILE) in message
    assert "one-to-one, total-order, fanout-logger, at-least-once, exactly-once" in message


def test_an_unknown_job_fails_naming_the_catalogue(monkeypatch):
    monkeypatch.setenv(base.JOB_VARIABLE, "no-such-job")
    unknown = re.escape(f"{catalogue.CATALOGUE_FILE} declares no job 'no-such-job'")
    with pytest.raises(SystemExit, match=unknown) as failed:
        base.job_spec([], RTP)
    assert "--job NAME" in str(failed.value) and "KAFKA_PATTERNS_JOB" in str(failed.value)


def test_a_job_of_another_module_is_refused():
    with pytest.raises(SystemExit, match=r"job 'pipeline-clean' runs kafka_patterns\.jobs\.pipeline, not this module"):
        base.job_spec(["--job", "pipeline-clean"], RTP)


def test_the_catalogue_args_come_first_and_the_command_line_wins():
    job = catalogue.job("at-least-once")
    p = readings_to_postgres.parser(job)
    assert p.parse_args([]).sink == "at-least-once"
    # The chart passes the args on the command line too: the same job.
    assert vars(p.parse_args(list(job.args))) == vars(p.parse_args([]))
    assert p.parse_args(["--sink", "exactly-once"]).sink == "exactly-once"


def test_a_client_jobs_group_is_its_name_by_default():
    job = catalogue.job("work-queue")
    assert client.parser(job, None).parse_args([]).group == "work-queue"


@pytest.mark.parametrize("name", JOBS)
@pytest.mark.parametrize("given", ["option", "variable"])
def test_every_jobs_module_imports_and_its_main_takes_the_job(monkeypatch, capsys, name, given):
    """--help: the module, its job's spec and catalogue args and its whole command line
    load; nothing connects anywhere."""
    job = catalogue.job(name)
    argv = ["--help"]
    if given == "option":
        argv = ["--job", name, *argv]
    else:
        monkeypatch.setenv(base.JOB_VARIABLE, name)
    with pytest.raises(SystemExit) as done:
        importlib.import_module(job.module).main(argv)
    assert done.value.code == 0
    assert f"python -m {job.module}" in capsys.readouterr().out


def test_run_job_names_the_job_to_the_module(monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKPOINT_ROOT", str(tmp_path))
    monkeypatch.delenv("KP_JOB_RUNNER", raising=False)
    calls = []
    fake = types.SimpleNamespace(main=lambda argv: calls.append(argv) or 0)
    real = importlib.import_module
    monkeypatch.setattr(job_runs.importlib, "import_module", lambda module: fake if module == RTP else real(module))
    job_runs.run_job("at-least-once", "run1")
    (argv,) = calls
    assert argv[:2] == ["--job", "at-least-once"]
    assert "--available-now" in argv
    assert "--sink" not in argv, "the module reads its catalogue args itself"


def test_spawn_job_names_the_job_on_the_command_line(monkeypatch):
    started = []
    inventory.run_dir()  # read the listing (ansible-inventory, cached) before Popen is replaced
    monkeypatch.setattr(job_runs.subprocess, "Popen", lambda cmd, **kw: started.append(cmd))
    job_runs.spawn_job("work-queue", ["--worker-id", "w1"])
    (cmd,) = started
    assert cmd[1:] == ["-m", "kafka_patterns.jobs.work_queue", "--job", "work-queue", "--worker-id", "w1"]


class Writer:
    """Records what base.start asks of a DataStreamWriter."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *a, **k: (self.calls.append((name, a, k)), self)[1]


@pytest.mark.parametrize(("argv", "trigger"), [
    ([], ("trigger", (), {"processingTime": "2.0 seconds"})),
    (["--mode", "real-time"], ("trigger", (), {"realTime": "30.0 seconds"})),
    (["--mode", "real-time", "--available-now"], ("trigger", (), {"availableNow": True})),
])
def test_the_mode_picks_the_trigger_and_a_bounded_run_is_micro_batches(argv, trigger):
    job = catalogue.job("content-filter")
    args = base.parser(job, None).parse_args(["--job", job.name, *argv])
    writer = Writer()
    base.start(writer, job, args)
    assert trigger in writer.calls
    assert (("outputMode", ("update",), {}) in writer.calls) == (trigger[2] == {"realTime": "30.0 seconds"})


def test_the_catalogue_mode_is_the_default_and_micro_batch_when_unset():
    job = catalogue.job("content-filter")
    assert job.mode == "micro-batch"
    assert base.parser(job, None).parse_args(["--job", job.name]).mode == "micro-batch"


def test_a_stateful_stage_asked_for_real_time_fails_naming_the_key():
    from kafka_patterns.jobs import pipeline

    job = catalogue.job("pipeline-aggregate")
    args = pipeline.parser(job).parse_args(["--job", job.name, "--mode", "real-time"])
    with pytest.raises(SystemExit, match=r"jobs\.pipeline-aggregate\.mode: real-time is for stateless"):
        base.refuse_real_time(job, args, "the aggregate stage keeps windows in state")

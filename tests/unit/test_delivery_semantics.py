"""The readings -> PostgreSQL jobs (one-to-one, total order, the fan-out logger,
at-least-once, exactly-once): one module, the jobs told apart by their catalogue args
alone; and the fault-injection hook that crashes a job between its sink write and its
checkpoint commit."""

import pytest

from kafka_patterns.config import catalogue
from kafka_patterns.jobs import base, readings_to_postgres


@pytest.mark.parametrize(("job", "sink", "unique"), [
    ("one-to-one", "exactly-once", True), ("total-order", "exactly-once", True),
    ("fanout-logger", "exactly-once", True),
    # Neither delivery job stores a reading once by a unique key: that would hide a duplicate.
    ("at-least-once", "at-least-once", False), ("exactly-once", "exactly-once", False)])
def test_the_jobs_differ_in_their_catalogue_args_only(job, sink, unique):
    spec = catalogue.job(job)
    assert spec.module == readings_to_postgres.__name__
    args = readings_to_postgres.parser(spec).parse_args([])
    assert (args.sink, args.unique_readings) == (sink, unique)


@pytest.mark.parametrize(("job", "ledger", "unique"), [("at-least-once", False, ()),
                                                       ("exactly-once", True, ()),
                                                       ("one-to-one", True, readings_to_postgres.READING_KEY)])
def test_main_runs_the_sink_its_args_say(monkeypatch, job, ledger, unique):
    calls = []
    monkeypatch.setattr(readings_to_postgres, "ensure_table", lambda table, unique_readings: None)
    monkeypatch.setattr(base, "readings_to_table", lambda spec, args, rows, columns, exactly_once, unique:
                        calls.append((spec.name, args.available_now, exactly_once, unique)))
    assert readings_to_postgres.main(["--job", job, "--available-now"]) == 0
    assert calls == [(job, True, ledger, unique)]


def test_crash_hook_fires_once_per_checkpoint_at_the_requested_batch(monkeypatch, tmp_path):
    exits = []
    monkeypatch.setattr(base.os, "_exit", exits.append)
    monkeypatch.setenv("KP_CRASH_AFTER_BATCH", "2")
    base.crash_after_write_if_asked(str(tmp_path), 1)
    assert exits == []
    base.crash_after_write_if_asked(str(tmp_path), 2)
    assert exits == [137]
    base.crash_after_write_if_asked(str(tmp_path), 2)
    assert exits == [137], "the replay after the restart must not crash again"


def test_no_crash_without_the_variable(monkeypatch, tmp_path):
    exits = []
    monkeypatch.setattr(base.os, "_exit", exits.append)
    monkeypatch.delenv("KP_CRASH_AFTER_BATCH", raising=False)
    base.crash_after_write_if_asked(str(tmp_path), 2)
    assert exits == []


def test_the_ledger_is_keyed_by_the_checkpoints_query_id(tmp_path):
    # A checkpoint started again at the same path gets a new query id from Spark, so its
    # batch ids 0, 1, ... are not mistaken for the old checkpoint's committed batches.
    (tmp_path / "metadata").write_text('{"id":"6f1c0d2e-aaaa-bbbb-cccc-000000000001"}\n')
    first = base.ledger_name(str(tmp_path))
    (tmp_path / "metadata").write_text('{"id":"6f1c0d2e-aaaa-bbbb-cccc-000000000002"}\n')
    assert first == f"{tmp_path}@6f1c0d2e-aaaa-bbbb-cccc-000000000001"
    assert base.ledger_name(str(tmp_path)) != first


def test_a_checkpoint_without_spark_metadata_is_refused_naming_the_file(tmp_path):
    with pytest.raises(RuntimeError, match="metadata"):
        base.ledger_name(str(tmp_path))

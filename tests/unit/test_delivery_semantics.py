"""at-least-once vs exactly-once Spark jobs: the same readings -> PostgreSQL pipeline,
with the batch ledger only in the exactly-once job; and the fault-injection hook that
crashes a job between its sink write and its checkpoint commit."""

import pytest

from kafka_patterns.jobs import at_least_once, base, exactly_once


@pytest.mark.parametrize(("module", "job", "ledger"), [(at_least_once, "at-least-once", False),
                                                       (exactly_once, "exactly-once", True)])
def test_the_jobs_differ_only_in_the_batch_ledger(monkeypatch, module, job, ledger):
    calls = []
    monkeypatch.setattr(module, "run_to_postgres",
                        lambda name, argv, doc, exactly_once, unique_readings=None:
                        calls.append((name, argv, exactly_once, unique_readings)) or 0)
    assert module.main(["--available-now"]) == 0
    # Neither stores a reading once by a unique key: the ledger alone must do it.
    assert calls == [(job, ["--available-now"], ledger, False if ledger else None)]


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

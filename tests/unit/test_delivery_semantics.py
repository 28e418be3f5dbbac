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

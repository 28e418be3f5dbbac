"""runner.job_output: while jobs run in threads of one process (fan-out's subscribers),
their prints go to the details' log, and the terminal's streams come back whatever order
the jobs end in."""

from __future__ import annotations

import sys
import threading

from pattern_harness import job_runs


def test_the_first_job_ending_first_leaves_the_streams_as_they_were(tmp_path, monkeypatch):
    log = tmp_path / "demo.log"
    monkeypatch.setattr(job_runs, "_details", log)
    before = (sys.stdout, sys.stderr)
    entered = [threading.Event(), threading.Event()]
    first_left = threading.Event()

    def first_job() -> None:
        with job_runs.job_output():
            print("job 0 prints")
            entered[0].set()
            entered[1].wait(10)  # leaves first, while the second job still runs
        first_left.set()

    def second_job() -> None:
        with job_runs.job_output():
            print("job 1 prints")
            entered[1].set()
            first_left.wait(10)

    first = threading.Thread(target=first_job)
    first.start()
    entered[0].wait(10)
    second = threading.Thread(target=second_job)
    second.start()
    first.join(10)
    second.join(10)
    assert (sys.stdout, sys.stderr) == before
    print("the terminal's stderr still works", file=sys.stderr)
    assert "job 0 prints" in log.read_text() and "job 1 prints" in log.read_text()


def test_without_a_details_log_nothing_is_redirected(monkeypatch):
    monkeypatch.setattr(job_runs, "_details", None)
    before = (sys.stdout, sys.stderr)
    with job_runs.job_output():
        assert (sys.stdout, sys.stderr) == before

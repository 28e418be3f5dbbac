"""The job service lifecycle (pattern_harness.job_processes) against real tiny child
processes: a Python sleep loop stands in for a job, one with a child of its own for a
Spark driver and its JVM."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from kafka_patterns.clients import kafka
from pattern_harness import job_processes
from pattern_harness.job_processes import FailureMode, JobService, ProcessService, stop_all

# Prints its pid and its child's (the "JVM"), then ticks; says bye on SIGTERM.
DRIVER = """
import signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("pids", child.pid, flush=True)
signal.signal(signal.SIGTERM, lambda *_: (print("bye", flush=True), sys.exit(0)))
while True:
    print("tick", flush=True)
    time.sleep(0.05)
"""


def service(tmp_path: Path, code: str = DRIVER, **env: str) -> ProcessService:
    return ProcessService([sys.executable, "-c", code], tmp_path / "job.log", env)


def state(pid: int) -> str | None:
    """The process state letter from /proc (R, S, T, Z...), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def jvm_pid(s: ProcessService) -> int:
    line = kafka.wait_until(lambda: next((x for x in s.log.read_text().splitlines() if x.startswith("pids")), None),
                              10, interval=0.05, what="the driver to start its child")
    return int(line.split()[1])


def test_start_alive_and_clean_stop(tmp_path):
    s = service(tmp_path).start()
    child = jvm_pid(s)
    assert s.alive()
    assert s.kill(FailureMode.CLEAN_STOP) == 0
    assert not s.alive()
    assert "bye" in s.log_tail(), "SIGTERM runs the job's shutdown hook"
    kafka.wait_until(lambda: state(child) in (None, "Z") or None, 10, interval=0.05,
                       what="the child to get the group's SIGTERM")


# A driver that exits at once on SIGTERM while its "JVM" takes a second to shut down.
SLOW_JVM = """
import signal, subprocess, sys, time
jvm = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; "
                        "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(1), sys.exit(0))); "
                        "print('jvm ready', flush=True); time.sleep(60)"])
print("pids", jvm.pid, flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(0.05)
"""


def test_a_clean_stop_returns_only_once_the_jvm_has_shut_down_too(tmp_path):
    s = service(tmp_path, SLOW_JVM).start()
    jvm = jvm_pid(s)
    kafka.wait_until(lambda: "jvm ready" in s.log.read_text(), 10, interval=0.05,
                       what="the JVM stand-in's SIGTERM handler")
    assert s.stop() == 0
    # Returned after the slow shutdown, not when the driver left: a restart now is alone.
    assert state(jvm) in (None, "Z")
    assert not s.group_alive()


def test_sigkill_takes_the_whole_process_group(tmp_path):
    s = service(tmp_path).start()
    child = jvm_pid(s)
    assert s.kill(FailureMode.SIGKILL) == -9
    assert not s.alive()
    assert "bye" not in s.log_tail(), "no shutdown hook on SIGKILL"
    kafka.wait_until(lambda: state(child) in (None, "Z") or None, 10, interval=0.05,
                       what="the JVM stand-in to die with its driver")


def test_pause_stops_and_resumes(tmp_path):
    s = service(tmp_path).start()
    jvm_pid(s)
    pausing = threading.Thread(target=s.kill, args=(FailureMode.PAUSE,), kwargs={"pause_seconds": 1.0})
    pausing.start()
    time.sleep(0.4)
    assert state(s.pid) == "T", "stopped during the pause"
    ticks = s.log.read_text().count("tick")
    time.sleep(0.3)
    assert s.log.read_text().count("tick") == ticks, "no progress while paused"
    pausing.join()
    assert s.alive()
    kafka.wait_until(lambda: s.log.read_text().count("tick") > ticks or None, 10, interval=0.05,
                       what="the job to resume after SIGCONT")
    s.stop()


def test_bounce_restarts_with_the_same_command(tmp_path):
    s = service(tmp_path).start()
    first = s.pid
    assert s.kill(FailureMode.BOUNCE) == -9
    assert s.alive() and s.pid != first
    s.stop()


def test_crash_after_write_waits_for_the_job_to_crash_itself(tmp_path):
    crash = "import os, sys; print('wrote batch', os.environ['KP_CRASH_AFTER_BATCH'], flush=True); sys.exit(137)"
    s = service(tmp_path, crash)
    s.start(env={"KP_CRASH_AFTER_BATCH": "2"})
    assert s.kill(FailureMode.CRASH_AFTER_WRITE, timeout=10) == 137
    assert "wrote batch 2" in s.log_tail()


def test_log_tail_shows_the_end_of_a_failed_run(tmp_path):
    s = service(tmp_path, "import sys\nfor i in range(100): print('line', i)\nsys.exit('boom')").start()
    assert s.wait(10) == 1
    tail = s.log_tail(lines=3)
    assert tail.splitlines()[1:] == ["line 98", "line 99", "boom"]
    assert str(s.log) in tail
    assert ProcessService(["true"]).log_tail() == "(no log)"


def test_stop_all_stops_every_service_and_kills_a_stubborn_one(tmp_path):
    stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\n" \
               "time.sleep(60)"
    polite = service(tmp_path).start()
    deaf = ProcessService([sys.executable, "-c", stubborn], tmp_path / "deaf.log").start()
    kafka.wait_until(lambda: "up" in deaf.log.read_text() or None, 10, interval=0.05, what="the handler")
    stop_all([polite, deaf], timeout=0.5)
    assert not polite.alive() and not deaf.alive()
    assert deaf.wait() == -9


def test_job_service_runs_the_catalogue_module_as_the_jobs_user(monkeypatch, tmp_path):
    monkeypatch.setattr(job_processes.credentials, "run_dir", lambda: tmp_path)  # no monitoring running
    monkeypatch.setattr(job_processes.inventory, "listing_env", lambda: {"KP_INVENTORY_LISTING": "inv\n{}"})
    s = JobService("work-queue", ["--worker-id", "w1"], env={"X": "1"})
    assert s.cmd[1:] == ["-m", "kafka_patterns.jobs.work_queue", "--job", "work-queue", "--worker-id", "w1"]
    assert s.env == {"KP_KAFKA_USER": "work-queue", "KP_DRIVER_JAVA_OPTIONS": job_processes.SHORT_LIVED_JVM_OPTIONS,
                     "KP_INVENTORY_LISTING": "inv\n{}", "X": "1"}
    with pytest.raises(AssertionError, match="not started"):
        s.wait()


def test_a_job_announces_its_metrics_only_while_the_local_monitoring_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(job_processes.credentials, "run_dir", lambda: tmp_path)
    assert job_processes.monitoring_env() == {}
    (tmp_path / "monitoring" / "targets").mkdir(parents=True)
    assert job_processes.monitoring_env() == {"KP_METRICS_PORT": "0",
                                         "KP_PROMETHEUS_SD_DIR": str(tmp_path / "monitoring" / "targets")}
    assert JobService("work-queue").env["KP_METRICS_PORT"] == "0"


# A Spark driver stand-in whose "JVM" exits when the driver's pipe closes (as PySpark's
# gateway JVM does on EOF) and would say so if SIGTERM reached it.
DRIVER_AND_GATEWAY_JVM = """
import signal, subprocess, sys, time
JVM = ("import signal, sys; "
       "signal.signal(signal.SIGTERM, lambda *_: (print('jvm got SIGTERM', flush=True), sys.exit(1))); "
       "print('jvm ready', flush=True); sys.stdin.read(); print('jvm: driver gone', flush=True)")
jvm = subprocess.Popen([sys.executable, "-c", JVM], stdin=subprocess.PIPE)
print("pids", jvm.pid, flush=True)
signal.signal(signal.SIGTERM, lambda *_: (print("bye", flush=True), sys.exit(0)))
while True:
    time.sleep(0.05)
"""


def test_a_job_is_stopped_through_its_driver_and_its_jvm_left_to_follow(tmp_path):
    s = JobService("content-filter", log=tmp_path / "job.log")
    s.cmd = [sys.executable, "-c", DRIVER_AND_GATEWAY_JVM]
    s.start()
    jvm = jvm_pid(s)
    kafka.wait_until(lambda: "jvm ready" in s.log.read_text(), 10, interval=0.05, what="the JVM stand-in")
    assert s.kill(FailureMode.CLEAN_STOP) == 0
    log = s.log.read_text()
    assert "bye" in log and "jvm: driver gone" in log, log
    assert "jvm got SIGTERM" not in log, "a JVM signalled too stops its SparkContext under running queries"
    assert state(jvm) in (None, "Z") and not s.group_alive()


def test_sigterm_asks_a_job_to_stop_and_its_caller_gets_its_own_handler_back():
    from kafka_patterns.jobs import base

    callers = []
    previous = signal.signal(signal.SIGTERM, lambda *_: callers.append("caller"))
    try:
        with base.stopping_on_sigterm() as stopping:
            os.kill(os.getpid(), signal.SIGTERM)
            assert stopping.wait(5), "SIGTERM sets the job's event"
            assert callers == [], "not the caller's handler while the job runs"
        # A job run in-process (the demo, a scenario) leaves its caller's SIGTERM as it was.
        os.kill(os.getpid(), signal.SIGTERM)
        kafka.wait_until(lambda: callers, 5, interval=0.01, what="the caller's handler")
    finally:
        signal.signal(signal.SIGTERM, previous)

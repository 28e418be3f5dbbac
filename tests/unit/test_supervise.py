"""kafka_patterns.monitoring.supervise with real child processes: a crash (death by a signal) is
restarted, an exit of the child's own ends it with the same code, SIGTERM reaches the
child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import ROOT
from kafka_patterns.clients import kafka

SUPERVISE = [sys.executable, "-m", "kafka_patterns.monitoring.supervise", "--backoff", "0.1", "--"]
ENV = {"PYTHONPATH": str(ROOT / "spark-jobs" / "src")}


def child(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(body))
    return [sys.executable, str(script)]


def test_a_crashed_child_is_started_again(tmp_path):
    runs = tmp_path / "runs"
    command = child(tmp_path, f"""
        import os, signal
        from pathlib import Path
        runs = Path({str(runs)!r})
        runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
        if len(runs.read_text()) < 3:
            os.kill(os.getpid(), signal.SIGSEGV)  # what a native crash looks like from outside
        raise SystemExit(0)
    """)
    done = subprocess.run(SUPERVISE + command, capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 0, done.stderr
    assert runs.read_text() == "xxx"
    assert done.stderr.count("died of SIGSEGV") == 2, done.stderr


def test_an_exit_of_its_own_ends_the_supervisor_with_its_code(tmp_path):
    command = child(tmp_path, "raise SystemExit(2)\n")
    done = subprocess.run(SUPERVISE + command, capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 2
    assert "died of" not in done.stderr


def test_sigterm_reaches_the_child_and_nothing_restarts(tmp_path):
    marker = tmp_path / "terminated"
    command = child(tmp_path, f"""
        import signal, sys, time
        from pathlib import Path
        def stop(*_):
            Path({str(marker)!r}).write_text("yes")
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        Path({str(marker)!r} + ".ready").write_text("")
        while True:
            time.sleep(0.1)
    """)
    proc = subprocess.Popen(SUPERVISE + command, stderr=subprocess.PIPE, text=True, env=ENV)
    ready = Path(f"{marker}.ready")
    kafka.wait_until(ready.exists, timeout=30, interval=0.05, what="the child to start")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert marker.read_text() == "yes"
    assert "died of" not in proc.stderr.read()


def test_a_killed_supervisor_takes_its_child_with_it(tmp_path):
    pid_file = tmp_path / "child.pid"
    command = child(tmp_path, f"""
        import os, time
        from pathlib import Path
        # Written aside, then renamed: the test reads the file as soon as it exists.
        Path({str(pid_file)!r} + ".tmp").write_text(str(os.getpid()))
        Path({str(pid_file)!r} + ".tmp").rename({str(pid_file)!r})
        while True:
            time.sleep(0.1)
    """)
    proc = subprocess.Popen(SUPERVISE + command, stderr=subprocess.DEVNULL, env=ENV)
    try:
        kafka.wait_until(pid_file.exists, timeout=30, interval=0.05, what="the child to start")
        child_pid = int(pid_file.read_text())
    finally:  # killed whatever happened: a failed wait left the supervisor running for good
        proc.kill()
        proc.wait(timeout=30)

    def gone() -> bool:
        try:
            os.kill(child_pid, 0)
        except ProcessLookupError:
            return True
        # A zombie until its parent (now init) reaps it: dead all the same.
        return Path(f"/proc/{child_pid}/stat").read_text().split(")")[-1].split()[0] == "Z"

    kafka.wait_until(gone, timeout=30, interval=0.05, what="the orphaned child to die")

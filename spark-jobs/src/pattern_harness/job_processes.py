"""Job processes as service objects with a lifecycle (start, stop, kill, alive) and a
log collected for failure messages, the way Kafka's own test framework (tests/kafkatest
services) structures its services. A failure is a FailureMode parameter, so a fault
test names the fault it injects instead of hand-rolling signals.

Every job runs in its own session (process group): a Spark job's Python driver starts
a JVM child, and a kill must take both, like a crashed pod."""

from __future__ import annotations

import contextlib
import enum
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from kafka_patterns.config import catalogue, credentials, inventory


class FailureMode(enum.Enum):
    """The faults a pattern's promise is tested under; the values are the names the
    catalogue's patterns.<pattern>.faults use."""
    CLEAN_STOP = "clean-stop"  # SIGTERM, the job's shutdown hooks run (a rolling restart)
    SIGKILL = "sigkill"  # no shutdown hooks: a crashed pod
    BOUNCE = "bounce"  # SIGKILL, then start again with the same arguments
    CRASH_AFTER_WRITE = "crash-after-write"  # the job exits after a sink write, before its commit
    PAUSE = "pause"  # SIGSTOP for a while then SIGCONT: a GC pause or a frozen node


class ProcessService:
    """One command run as its own process group, its output appended to `log`."""

    def __init__(self, cmd: Sequence[str], log: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.cmd, self.log, self.env = list(cmd), log, dict(env or {})
        self.proc: subprocess.Popen | None = None

    def start(self, env: dict[str, str] | None = None) -> ProcessService:
        """Start (again); `env` adds to the service's env for this start only."""
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
        try:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, **self.env, **(env or {})})
        finally:
            if out is not subprocess.DEVNULL:
                out.close()  # the child holds its own copy
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not started"
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        assert self.proc is not None, "not started"
        return self.proc.wait(timeout=timeout)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def terminate(self) -> None:
        """SIGTERM the group without waiting (stop_all stops several at once)."""
        if self.alive():
            self._signal(signal.SIGTERM)

    def group_alive(self) -> bool:
        """Whether any process of the group is left (the leader reaped, its JVM not)."""
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def _wait_for_the_group(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.group_alive():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM the group and wait for all of it: a Python driver may exit while its
        JVM still runs its shutdown hooks (a streaming query's last commit), and a
        restart before that would share its checkpoint. SIGKILL what is left in time."""
        if self.alive():
            self.terminate()
            deadline = time.monotonic() + timeout
            try:
                rc = self.wait(timeout)
            except subprocess.TimeoutExpired:
                return self.hard_kill()
            if self._wait_for_the_group(max(0.0, deadline - time.monotonic())):
                return rc
            self.hard_kill()
            return rc
        return self.hard_kill()

    def hard_kill(self) -> int:
        """SIGKILL the whole group, even after the leader exited: a crashed Python driver
        leaves its JVM behind in the group. Returns once no process of it is left."""
        self._signal(signal.SIGKILL)
        rc = self.wait(30)
        self._wait_for_the_group(30)
        return rc

    def pause(self) -> None:
        """Freeze the group (SIGSTOP): it holds its sockets, sessions and transactions
        but does nothing, like a process in a long GC pause or on a frozen node."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def kill(self, mode: FailureMode, pause_seconds: float = 5.0, timeout: float | None = None) -> int | None:
        """Inject one failure; returns the exit status of the process it ended (None for
        a pause). CRASH_AFTER_WRITE is chosen at start (the job crashes itself after a
        write, see CRASH_AFTER_BATCH), so here it waits up to `timeout` for that crash
        (TimeoutExpired if it does not come) and reaps the group."""
        if mode is FailureMode.CLEAN_STOP:
            return self.stop()
        if mode is FailureMode.SIGKILL:
            return self.hard_kill()
        if mode is FailureMode.BOUNCE:
            rc = self.hard_kill()
            self.start()
            return rc
        if mode is FailureMode.CRASH_AFTER_WRITE:
            rc = self.wait(timeout)
            self.hard_kill()
            return rc
        self.pause()  # PAUSE
        try:
            time.sleep(pause_seconds)
        finally:
            self.resume()
        return None

    def log_tail(self, lines: int = 30) -> str:
        """The end of the log, for a failure message."""
        if not self.log or not self.log.exists():
            return "(no log)"
        tail = self.log.read_bytes().decode(errors="replace").splitlines()[-lines:]
        return f"last {len(tail)} lines of {self.log}:\n" + "\n".join(tail)


def stop_all(services: Iterable[ProcessService], timeout: float = 30) -> None:
    """Stop several services in parallel: all get SIGTERM before any is waited for."""
    services = list(services)
    for service in services:
        service.terminate()
    for service in services:
        service.stop(timeout)


# A scenario's job process lives seconds to a minute, mostly starting up: without the C2
# compiler its driver JVM used 12.6 CPU-s instead of 21.8 for the same at-least-once run
# of 3,000 readings (wall 11.8 s instead of 15.4), and make demo starts a dozen of them.
# C1 alone also shrinks the code cache to 48 MB (JDK 17), which make demo's driver, running
# every pattern's jobs, filled after two minutes: "CodeCache is full. Compiler has been
# disabled", and the rest of the demo ran interpreted. 240 MB is the tiered default.
# KP_DRIVER_JAVA_OPTIONS set in the environment, even empty (C2 back), wins.
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


class JobService(ProcessService):
    """A catalogue job run as its own process (`python -m <module> --job <name> ...`),
    connecting as the job's own Kafka user (its ACLs)."""

    def __init__(self, job: str, args: Sequence[str] = (), log: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        module = catalogue.job(job).module
        super().__init__([sys.executable, "-m", module, "--job", job, *args], log,
                         {"KP_KAFKA_USER": job,
                          "KP_DRIVER_JAVA_OPTIONS": os.environ.get("KP_DRIVER_JAVA_OPTIONS", SHORT_LIVED_JVM_OPTIONS),
                          **inventory.listing_env(), **monitoring_env(), **(env or {})})
        self.job = job

    def terminate(self) -> None:
        """SIGTERM the job's driver only, not its group: the driver stops its queries
        (jobs.base.await_all) and its Spark JVM exits after it. The JVM signalled too
        would run its shutdown hook at once, stopping the SparkContext under a running
        query (which fails with a NullPointerException, logged at ERROR: SPARK-59242).
        stop() still waits for the whole group and kills what is left in time."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)


def monitoring_env() -> dict[str, str]:
    """While the local monitoring runs (role monitoring), a Spark job serves its streaming
    metrics on a free port and announces it to Prometheus (kafka_patterns.runtime.streaming_metrics)."""
    sd_dir = credentials.run_dir() / "monitoring" / "targets"
    return {"KP_METRICS_PORT": "0", "KP_PROMETHEUS_SD_DIR": str(sd_dir)} if sd_dir.is_dir() else {}

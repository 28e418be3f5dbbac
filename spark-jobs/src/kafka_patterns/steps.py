"""Run a long command quietly: its whole output goes to a log under .run/logs/, the
terminal gets one line per step with its time.

    python -m kafka_patterns.steps --log .run/logs/up.log --title "make up" -- ansible-playbook ...

A step is a play when the command is ansible-playbook (the `progress` callback of
ansible/plugins/callback reports plays, tasks and failures on a pipe), else the command
itself. On a terminal the running step shows its current task and time; elsewhere (CI)
a long step prints a line every HEARTBEAT seconds. A failure prints the failing step
and task, the failure's message, the end of the log and its path. --verbose (make V=1)
shows the output live and still writes the log.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HEARTBEAT = 30.0  # seconds between "still running" lines when the output is not a terminal
TAIL_LINES = 25


@dataclass
class Progress:
    """What the runner knows of the command so far, from the callback's events."""
    title: str
    step: str | None = None
    task: str = ""
    step_started: float = field(default_factory=time.monotonic)
    failures: list[dict] = field(default_factory=list)
    changed: dict[str, int] | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.step_started


class Display:
    """One line per finished step; on a terminal a live line for the running one."""

    def __init__(self, stream=sys.stdout) -> None:
        self.stream, self.tty = stream, stream.isatty()
        self._live = False
        self._last_beat = time.monotonic()

    def _clear_live(self) -> None:
        if self._live:
            self.stream.write("\r\x1b[K")
            self._live = False

    def line(self, text: str) -> None:
        self._clear_live()
        self.stream.write(text + "\n")
        self.stream.flush()

    def step_done(self, name: str, seconds: float) -> None:
        self.line(f"  {name:<58} {seconds:6.1f}s")
        self._last_beat = time.monotonic()

    def running(self, progress: Progress) -> None:
        name = progress.step or progress.title
        if self.tty:
            task = f" · {progress.task}" if progress.task else ""
            text = f"  … {name}{task}"[: max(20, _columns() - 10)]
            self.stream.write(f"\r\x1b[K{text} {progress.elapsed():.0f}s")
            self.stream.flush()
            self._live = True
        elif time.monotonic() - self._last_beat >= HEARTBEAT:
            self.line(f"    … {name}: {progress.task or 'running'} ({progress.elapsed():.0f}s)")
            self._last_beat = time.monotonic()


def _columns() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100


def apply(event: dict, progress: Progress, display: Display) -> None:
    """Fold one callback event into the progress, printing a finished step."""
    kind = event.get("event")
    if kind == "play":
        if progress.step is not None:
            display.step_done(progress.step, progress.elapsed())
        progress.step, progress.task, progress.step_started = event["name"] or "(unnamed play)", "", time.monotonic()
    elif kind == "task":
        progress.task = event["name"]
    elif kind == "note":
        for line in event["lines"]:
            display.line(f"    {line}")
    elif kind == "failed":
        progress.failures.append(event)
    elif kind == "stats":
        progress.changed = event["changed"]


class EventReader:
    """The callback's JSON lines from a non-blocking pipe, as whole lines arrive."""

    def __init__(self, fd: int) -> None:
        self.fd, self.pending = fd, b""

    def read(self) -> list[dict]:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]


def change_line(changed: dict[str, int]) -> str:
    if not any(changed.values()):
        return "nothing changed (already in the desired state)"
    parts = ", ".join(f"{h}={n}" for h, n in changed.items() if n)
    return f"{sum(changed.values())} change(s): {parts}"


def tail(log: Path, lines: int = TAIL_LINES) -> list[str]:
    return log.read_bytes().decode(errors="replace").splitlines()[-lines:]


def keep_previous(log: Path) -> None:
    """Start a fresh log: the previous run's is kept as <log>.1."""
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.exists() and log.stat().st_size:
        log.replace(log.with_name(log.name + ".1"))


def open_log(log: Path, cmd: Sequence[str], append: bool = False):
    """A fresh log per run (keep_previous); or appended to, when one target runs several
    commands into one log."""
    if not append:
        keep_previous(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "ab")  # noqa: SIM115 - the child writes into it until it ends
    out.write(f"# {time.strftime('%Y-%m-%dT%H:%M:%S%z')} {' '.join(cmd)}\n".encode())
    out.flush()
    return out


def run_verbose(cmd: Sequence[str], log: Path, append: bool = False) -> int:
    """The output live and in the log (make V=1)."""
    with open_log(log, cmd, append) as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            out.write(chunk)
        return proc.wait()


def run_quiet(cmd: Sequence[str], log: Path, title: str, display: Display | None = None,
              append: bool = False) -> int:
    display = display or Display()
    progress = Progress(title)
    started = time.monotonic()
    read_end, write_end = os.pipe()
    with open_log(log, cmd, append) as out:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, pass_fds=(write_end,),
                                    env={**os.environ, "KP_PROGRESS_FD": str(write_end)})
        finally:
            os.close(write_end)  # the child has its own copy
        # Read until the command ends, not until EOF: a daemon it starts could inherit
        # the pipe and hold it open for good.
        os.set_blocking(read_end, False)
        reader = EventReader(read_end)
        try:
            while proc.poll() is None:
                select.select([read_end], [], [], 0.5)
                for event in reader.read():
                    apply(event, progress, display)
                display.running(progress)
            for event in reader.read():
                apply(event, progress, display)
        finally:
            os.close(read_end)
        rc = proc.wait()
    if rc == 0:
        display.step_done(progress.step or title, progress.elapsed())
        if progress.changed is not None:
            display.line(f"  {change_line(progress.changed)}")
        display.line(f"==> {title}: done in {time.monotonic() - started:.0f}s (log: {_shown(log)})")
        return 0
    step = progress.step or title
    display.line(f"  {step}: FAILED after {progress.elapsed():.0f}s (exit {rc})")
    for failure in progress.failures:
        display.line(f"    task '{failure['task']}' on {failure['host']}: {failure['msg']}")
    display.line(f"  last {TAIL_LINES} lines of {_shown(log)}:")
    for line in tail(log):
        display.line(f"    {line}")
    display.line(f"==> {title} failed in step '{step}'; the whole output: {_shown(log)} (V=1 shows it live)")
    return rc


def _shown(log: Path) -> str:
    try:
        return str(log.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(log)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="where the command's whole output goes")
    parser.add_argument("--title", required=True, help="what the command does, for the first and last line")
    parser.add_argument("--verbose", action="store_true", help="show the output live too (make V=1)")
    parser.add_argument("--append", action="store_true", help="append to the log instead of starting a new one")
    parser.add_argument("cmd", nargs="+", help="the command, after --")
    args = parser.parse_args(argv)
    if args.verbose:
        return run_verbose(args.cmd, args.log, args.append)
    print(f"==> {args.title} (log: {_shown(args.log)}; V=1 shows it live)", flush=True)
    try:
        return run_quiet(args.cmd, args.log, args.title, append=args.append)
    except KeyboardInterrupt:
        print(f"\n==> {args.title}: interrupted; the output so far: {_shown(args.log)}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Run a long command quietly: its whole output goes to a log under .run/logs/, the
terminal gets one line per step with its time.

    python -m platform_cli.steps --log .run/logs/up.log --title "make up" -- ansible-playbook ...

A step is a play when the command is ansible-playbook (the `progress` callback of
ansible/plugins/callback reports plays, tasks and failures on a pipe), else the command
itself. On a terminal the running step shows its current task and time; elsewhere (CI)
a long step prints a line every HEARTBEAT seconds. A failure prints the failing step
and task, the failure's message, the end of the log and its path. --verbose (make V=1)
shows the output live and still writes the log.

    python -m platform_cli.steps --log .run/logs/up.log --title "make up" \
        --stages "bridge | postgresql kafka" -- ansible-playbook ... ansible/playbooks/{}.yml

runs the command once per name, stage after stage, the names of a stage at once (make up:
services that do not need each other start together); V=1 runs them one by one.
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
    no_hosts: bool = False  # the running play matched no host of the inventory

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

    def step_done(self, name: str, seconds: float, no_hosts: bool = False) -> None:
        self.line(f"  {name:<58} {'no host' if no_hosts else f'{seconds:6.1f}s'}")
        self._last_beat = time.monotonic()

    def running(self, progresses: Sequence[Progress]) -> None:
        """The running steps: a live line on a terminal, else a line every HEARTBEAT."""
        if not progresses:
            return
        if self.tty:
            parts = [f"{p.step or p.title}{f' · {p.task}' if p.task else ''} {p.elapsed():.0f}s" for p in progresses]
            text = "  … " + " | ".join(parts)
            self.stream.write(f"\r\x1b[K{text[: max(20, _columns() - 2)]}")
            self.stream.flush()
            self._live = True
        elif time.monotonic() - self._last_beat >= HEARTBEAT:
            for p in progresses:
                self.line(f"    … {p.step or p.title}: {p.task or 'running'} ({p.elapsed():.0f}s)")
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
        if event["name"] and event["name"] == progress.step:
            return  # the same play's next batch of hosts (`serial`): one step
        if progress.step is not None:
            display.step_done(progress.step, progress.elapsed(), progress.no_hosts)
        progress.step, progress.task, progress.step_started = event["name"] or "(unnamed play)", "", time.monotonic()
        progress.no_hosts = False
    elif kind == "no_hosts":
        progress.no_hosts = True
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


class Child:
    """One command of a run: its process writing into its log, and its progress read
    from the callback's events as it goes."""

    def __init__(self, cmd: Sequence[str], log: Path, title: str, display: Display,
                 append: bool = False) -> None:
        self.cmd, self.log, self.display = list(cmd), log, display
        self.progress = Progress(title)
        self.started = time.monotonic()
        self.rc: int | None = None
        read_end, write_end = os.pipe()
        self.out = open_log(log, cmd, append)
        try:
            self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, pass_fds=(write_end,),
                                         env={**os.environ, "KP_PROGRESS_FD": str(write_end)})
        except BaseException:
            os.close(read_end)
            self.out.close()
            raise
        finally:
            os.close(write_end)  # the child has its own copy
        # Read until the command ends, not until EOF: a daemon it starts could inherit
        # the pipe and hold it open for good.
        os.set_blocking(read_end, False)
        self.read_end, self.reader = read_end, EventReader(read_end)

    def poll(self) -> bool:
        """Fold in what arrived; True while the command runs."""
        if self.rc is not None:
            return False
        for event in self.reader.read():
            apply(event, self.progress, self.display)
        if self.proc.poll() is None:
            return True
        for event in self.reader.read():
            apply(event, self.progress, self.display)
        self.rc = self.proc.wait()
        os.close(self.read_end)
        self.out.close()
        if self.rc == 0:
            self.display.step_done(self.progress.step or self.progress.title, self.progress.elapsed(),
                                   self.progress.no_hosts)
        return False

    def report_failure(self) -> None:
        display, progress = self.display, self.progress
        step = progress.step or progress.title
        display.line(f"  {step}: FAILED after {progress.elapsed():.0f}s (exit {self.rc})")
        display.line(f"  last {TAIL_LINES} lines of {_shown(self.log)}:")
        for line in tail(self.log):
            display.line(f"    {line}")
        # The failed tasks last, just above the closing line: what a CI log's tail keeps.
        # An earlier task's failure (a node that did not start) is often the cause.
        if progress.failures:
            display.line("  failed tasks:")
        for failure in progress.failures:
            display.line(f"    task '{failure['task']}' on {failure['host']}: {failure['msg']}")


def _wait(children: list[Child], display: Display) -> None:
    while any([child.poll() for child in children]):  # a list: poll every child each round
        running = [child for child in children if child.rc is None]
        select.select([child.read_end for child in running], [], [], 0.5)
        display.running([child.progress for child in running])


def _merged_changes(children: list[Child]) -> dict[str, int] | None:
    known = [child.progress.changed for child in children if child.progress.changed is not None]
    if not known:
        return None
    merged: dict[str, int] = {}
    for changed in known:
        for host, n in changed.items():
            merged[host] = merged.get(host, 0) + n
    return dict(sorted(merged.items()))


Command = tuple[str, Sequence[str]]  # a name for its log, and the command


def run_stages(stages: Sequence[Sequence[Command]], log: Path, title: str,
               display: Display | None = None, append: bool = False) -> int:
    """Run stage after stage, the commands of a stage at once. With more than one
    command each writes a log of its own, <log stem>.<name>.log, appended to `log` as
    its stage ends. A failure lets the rest of its stage end (a playbook stopped
    mid-task leaves a service half set up), is reported, and no further stage starts."""
    display = display or Display()
    started = time.monotonic()
    several = sum(len(stage) for stage in stages) > 1
    main_log = open_log(log, [title], append) if several else None
    children: list[Child] = []
    failed: list[Child] = []
    try:
        for stage in stages:
            batch = _start(stage, log, title, display, append, several)
            children += batch
            _wait(batch, display)
            if main_log is not None:
                for child in batch:
                    main_log.write(child.log.read_bytes())
                main_log.flush()
            failed = [child for child in batch if child.rc != 0]
            if failed:
                break
    finally:
        if main_log is not None:
            main_log.close()
    if not failed:
        changed = _merged_changes(children)
        if changed is not None:
            display.line(f"  {change_line(changed)}")
        display.line(f"==> {title}: done in {time.monotonic() - started:.0f}s (log: {_shown(log)})")
        return 0
    for child in failed:
        child.report_failure()
    steps_failed = ", ".join(f"'{child.progress.step or child.progress.title}'" for child in failed)
    shown = ", ".join(_shown(child.log) for child in failed)
    display.line(f"==> {title} failed in step {steps_failed}; the whole output: {shown} (V=1 shows it live)")
    return failed[0].rc or 1


def _start(stage: Sequence[Command], log: Path, title: str, display: Display, append: bool,
           several: bool) -> list[Child]:
    """Start the commands of a stage. When one cannot start (no such program), those
    already started end first, as after a failure, and the error goes up."""
    batch: list[Child] = []
    try:
        for name, cmd in stage:
            batch.append(Child(cmd, log.with_name(f"{log.stem}.{name}{log.suffix}") if several else log,
                               name if several else title, display, append=append and not several))
    except Exception:
        _wait(batch, display)
        raise
    return batch


def run_quiet(cmd: Sequence[str], log: Path, title: str, display: Display | None = None,
              append: bool = False) -> int:
    return run_stages([[(title, cmd)]], log, title, display, append)


def stage_commands(stages: str, cmd: Sequence[str]) -> list[list[Command]]:
    """"a | b c" and a command with {} -> [[(a, cmd with a)], [(b, cmd with b), (c, cmd with c)]]."""
    if not any("{}" in arg for arg in cmd):
        raise SystemExit("--stages needs a command with {} where each name goes")
    return [[(name, [arg.replace("{}", name) for arg in cmd]) for name in stage.split()]
            for stage in stages.split("|") if stage.strip()]


def _shown(log: Path) -> str:
    try:
        return str(log.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(log)


def run(stages: Sequence[Sequence[Command]], log: Path, title: str, verbose: bool = False,
        append: bool = False) -> int:
    """The whole quiet run, as `make` shows it: a first line, a line per step, a last
    line; verbose runs the commands one by one with their output live."""
    if verbose:  # one command after the other, so that the output reads in order
        commands = [cmd for stage in stages for _, cmd in stage]
        for i, cmd in enumerate(commands):
            rc = run_verbose(cmd, log, append=append or i > 0)
            if rc:
                return rc
        return 0
    print(f"==> {title} (log: {_shown(log)}; V=1 shows it live)", flush=True)
    try:
        return run_stages(stages, log, title, append=append)
    except KeyboardInterrupt:
        print(f"\n==> {title}: interrupted; the output so far: {_shown(log)}", file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="where the command's whole output goes")
    parser.add_argument("--title", required=True, help="what the command does, for the first and last line")
    parser.add_argument("--verbose", action="store_true", help="show the output live too (make V=1)")
    parser.add_argument("--append", action="store_true", help="append to the log instead of starting a new one")
    parser.add_argument("--stages", help='names "a | b c": the command once per name, for its {}; '
                        "stage after stage, the names of a stage at once")
    parser.add_argument("cmd", nargs="+", help="the command, after --")
    args = parser.parse_args(argv)
    stages = stage_commands(args.stages, args.cmd) if args.stages else [[(args.title, args.cmd)]]
    return run(stages, args.log, args.title, verbose=args.verbose, append=args.append)


if __name__ == "__main__":
    sys.exit(main())

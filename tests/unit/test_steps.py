"""The quiet runner (platform_cli.steps): a real ansible-playbook with the project's
ansible.cfg (so the `progress` callback) on a scratch local playbook, and small Python
commands that stand in for it."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import psutil
import pytest

from helpers import ROOT, VENV_BIN, ansible_env
from platform_cli import steps


class Screen(io.StringIO):
    def isatty(self) -> bool:
        return False


def run(cmd: list[str], log: Path, **env: str) -> tuple[int, list[str]]:
    screen = Screen()
    old = dict(os.environ)
    os.environ.update(env)
    try:
        rc = steps.run_quiet(cmd, log, "the title", steps.Display(screen))
    finally:
        os.environ.clear()
        os.environ.update(old)
    return rc, screen.getvalue().splitlines()


def playbook(tmp_path: Path, tasks: list[dict], name: str = "Second play") -> Path:
    path = tmp_path / "play.yml"
    path.write_text(json.dumps([
        {"name": "First play", "hosts": "localhost", "gather_facts": False,
         "tasks": [{"name": "Say something", "ansible.builtin.debug": {"msg": "hello from the play"}}]},
        {"name": name, "hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    return path


def ansible(tmp_path: Path, tasks: list[dict]) -> tuple[int, list[str], str]:
    log = tmp_path / "logs" / "run.log"
    cmd = [str(VENV_BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", f"ansible_python_interpreter={sys.executable}", str(playbook(tmp_path, tasks))]
    rc, lines = run(cmd, log, **ansible_env())
    return rc, lines, log.read_text()


def test_a_playbook_prints_a_line_per_play_its_notes_and_what_changed(tmp_path):
    rc, lines, log = ansible(tmp_path, [{"name": "Touch a file", "ansible.builtin.file":
                                         {"path": str(tmp_path / "touched"), "state": "touch"}}])
    assert rc == 0, lines
    assert [line.split()[:2] for line in lines if line.startswith("  First") or line.startswith("  Second")] == \
        [["First", "play"], ["Second", "play"]]
    assert "    hello from the play" in lines
    assert "  1 change(s): localhost=1" in lines
    assert lines[-1].startswith("==> the title: done in ")
    assert len(lines) == 5, lines
    # The whole output is in the log, not on the screen.
    assert "TASK [Touch a file]" in log and "PLAY RECAP" in log
    assert not any("TASK [" in line for line in lines)


def test_a_play_without_hosts_says_so_instead_of_a_time(tmp_path):
    path = tmp_path / "play.yml"
    path.write_text(json.dumps([
        {"name": "Schema registry", "hosts": "registry", "gather_facts": False, "tasks": []},
        {"name": "Last play", "hosts": "localhost", "gather_facts": False,
         "tasks": [{"name": "Nothing", "ansible.builtin.debug": {"msg": "done"}}]}]))
    cmd = [str(VENV_BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", f"ansible_python_interpreter={sys.executable}", str(path)]
    rc, lines = run(cmd, tmp_path / "run.log", **ansible_env())
    assert rc == 0, lines
    steps_shown = [line.split() for line in lines if line.startswith("  Schema") or line.startswith("  Last")]
    assert steps_shown[0] == ["Schema", "registry", "no", "host"]
    assert steps_shown[1][:2] == ["Last", "play"] and steps_shown[1][-1].endswith("s")


def test_a_play_run_a_host_at_a_time_is_one_step(tmp_path):
    path = tmp_path / "play.yml"
    path.write_text(json.dumps([{"name": "Stop the nodes", "hosts": "all", "serial": 1, "gather_facts": False,
                                 "tasks": [{"name": "Nothing", "ansible.builtin.debug": {"msg": "stopped"}}]}]))
    cmd = [str(VENV_BIN / "ansible-playbook"), "-i", "node-1,node-2,node-3,", "-c", "local",
           "-e", f"ansible_python_interpreter={sys.executable}", str(path)]
    rc, lines = run(cmd, tmp_path / "run.log", **ansible_env())
    assert rc == 0, lines
    assert len([line for line in lines if line.startswith("  Stop the nodes")]) == 1, lines
    assert lines.count("    stopped") == 3


def test_a_failing_task_prints_the_step_the_task_its_message_and_the_log(tmp_path):
    rc, lines, _ = ansible(tmp_path, [{"name": "Refuse", "ansible.builtin.fail": {"msg": "the port 9092 is taken"}}])
    assert rc != 0
    text = "\n".join(lines)
    assert "  Second play: FAILED after" in text
    assert "    task 'Refuse' on localhost: the port 9092 is taken" in text
    assert f"lines of {tmp_path / 'logs' / 'run.log'}" in text
    assert "fatal: [localhost]: FAILED!" in text  # the log's tail
    assert lines[-1].startswith("==> the title failed in step 'Second play'")
    assert lines[-2] == "    task 'Refuse' on localhost: the port 9092 is taken", "the cause right above the end"


def test_a_failed_command_is_reported_in_its_own_words(tmp_path):
    task = {"name": "Restart", "ansible.builtin.shell": "echo 'kafka-2 was not ready' >&2; exit 1"}
    rc, lines, _ = ansible(tmp_path, [task])
    assert rc != 0
    assert lines[-2] == "    task 'Restart' on localhost: kafka-2 was not ready", "stderr, not 'non-zero return code'"


def test_a_long_failure_message_keeps_its_start_and_its_end(tmp_path):
    """A service's failure message ends with its log's last lines: the reason it exited."""
    msg = "kafka-3 exited. " + "x" * 3000 + " Address already in use"
    rc, lines, _ = ansible(tmp_path, [{"name": "Refuse", "ansible.builtin.fail": {"msg": msg}}])
    assert rc != 0
    assert lines[-2].startswith("    task 'Refuse' on localhost: kafka-3 exited. xxx")
    assert lines[-2].endswith("xxx Address already in use")
    assert " [...] " in lines[-2] and len(lines[-2]) < 1000


def test_a_command_without_plays_is_one_step_and_its_failure_shows_the_tail(tmp_path):
    log = tmp_path / "cmd.log"
    rc, lines = run([sys.executable, "-c", "print('line one'); print('boom'); raise SystemExit(3)"], log)
    assert rc == 3
    assert lines[0].startswith("  the title: FAILED after")
    assert "    boom" in lines
    assert "line one" in log.read_text()


def test_a_daemon_holding_the_pipe_does_not_keep_the_runner_waiting(tmp_path):
    """The command ends; a process it left behind still has the progress pipe open."""
    code = ("import os, subprocess, sys; fd = int(os.environ['KP_PROGRESS_FD']); "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], pass_fds=(fd,), "
            "start_new_session=True); print('started')")
    rc, lines = run([sys.executable, "-c", code], tmp_path / "daemon.log")
    assert rc == 0
    assert lines[-1].startswith("==> the title: done in ")


def test_the_previous_log_is_kept_and_append_adds_to_it(tmp_path):
    log = tmp_path / "x.log"
    run([sys.executable, "-c", "print('first')"], log)
    run([sys.executable, "-c", "print('second')"], log)
    assert "first" in (tmp_path / "x.log.1").read_text() and "second" in log.read_text()
    screen = Screen()
    steps.run_quiet([sys.executable, "-c", "print('third')"], log, "t", steps.Display(screen), append=True)
    assert "second" in log.read_text() and "third" in log.read_text()


def test_events_are_read_as_whole_lines_only():
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    reader = steps.EventReader(read_end)
    os.write(write_end, b'{"event": "play", "name": "a"}\n{"event": "ta')
    assert reader.read() == [{"event": "play", "name": "a"}]
    os.write(write_end, b'sk", "name": "b"}\n')
    assert reader.read() == [{"event": "task", "name": "b"}]
    os.close(write_end)
    os.close(read_end)


def test_the_callback_is_enabled_in_the_projects_ansible_cfg():
    cfg = (ROOT / "ansible" / "ansible.cfg").read_text()
    assert "progress" in next(line for line in cfg.splitlines() if line.startswith("callbacks_enabled"))


def stages_run(tmp_path: Path, stages: str, code: str) -> tuple[int, list[str]]:
    """`--stages` with a Python stand-in for ansible-playbook: {} is the name."""
    screen = Screen()
    commands = steps.stage_commands(stages, [sys.executable, "-c", code, "{}", str(tmp_path)])
    rc = steps.run_stages(commands, tmp_path / "logs" / "up.log", "the title", steps.Display(screen))
    return rc, screen.getvalue().splitlines()


# Each name writes <name>.started and prints; "a" and "b" each wait for the other's file,
# which only works when they run at once; "fail" exits 2.
MEET = """
import sys, time
from pathlib import Path
name, where = sys.argv[1], Path(sys.argv[2])
(where / f"{name}.started").touch()
print(f"output of {name}")
other = {"a": "b", "b": "a"}.get(name)
deadline = time.monotonic() + 20
while other and not (where / f"{other}.started").exists():
    if time.monotonic() > deadline:
        sys.exit(f"{name} waited for {other} in vain")
    time.sleep(0.05)
sys.exit(2 if name == "fail" else 0)
"""


def test_the_names_of_a_stage_run_at_once_and_the_next_stage_after_them(tmp_path):
    rc, lines = stages_run(tmp_path, "a b | c", MEET)
    assert rc == 0, lines
    assert all((tmp_path / f"{name}.started").exists() for name in "abc")
    log = (tmp_path / "logs" / "up.log").read_text()
    assert all(f"output of {name}" in log for name in "abc")  # each command's own log, appended
    assert (tmp_path / "logs" / "up.a.log").exists()
    assert lines[-1].startswith("==> the title: done in ")


def test_a_failure_lets_its_stage_end_and_starts_no_further_stage(tmp_path):
    rc, lines = stages_run(tmp_path, "fail c | d", MEET)
    assert rc == 2
    assert (tmp_path / "c.started").exists() and not (tmp_path / "d.started").exists()
    text = "\n".join(lines)
    assert "  fail: FAILED after" in text
    assert f"the whole output: {tmp_path / 'logs' / 'up.fail.log'}" in text


def test_a_command_that_cannot_start_lets_those_started_before_it_end(tmp_path):
    screen = Screen()
    started = [sys.executable, "-c", "import time; time.sleep(0.5); print('output of ' + 'c')", str(tmp_path)]
    missing = [str(tmp_path / "no-such-program")]
    with pytest.raises(FileNotFoundError):
        steps.run_stages([[("c", started), ("missing", missing)]], tmp_path / "logs" / "up.log", "the title",
                         steps.Display(screen))
    # c was waited for: its output is complete and no process of it is left.
    assert "output of c" in (tmp_path / "logs" / "up.c.log").read_text()
    assert not [p for p in psutil.Process().children() if str(tmp_path) in " ".join(p.cmdline())]


def test_stages_need_a_placeholder_for_the_name():
    try:
        steps.stage_commands("a | b", ["ansible-playbook", "site.yml"])
    except SystemExit as refusal:
        assert "{}" in str(refusal)
    else:
        raise AssertionError("a command without {} was accepted")

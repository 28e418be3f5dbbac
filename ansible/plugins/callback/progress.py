"""Feed the quiet runner (platform_cli.steps): plays, tasks, failures and the recap as
JSON lines on the file descriptor named by KP_PROGRESS_FD, and the debug tasks' messages.

The runner writes the playbook's full output to .run/logs/ and prints one line per play
with its time; it needs the structure, which the text output only has as banners.
Without KP_PROGRESS_FD (a plain ansible-playbook run, V=1) this callback does nothing.
"""

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: progress
type: aggregate
short_description: plays, tasks and failures as JSON lines for the quiet runner
description:
  - Writes one JSON object per event to the file descriptor in KP_PROGRESS_FD, if set.
"""

MSG_LIMIT = 900  # a module's message can be a whole stack trace; the log has all of it


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "progress"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        fd = os.environ.get("KP_PROGRESS_FD")
        # Line-buffered: the runner shows a step as it starts, not when Ansible ends.
        self._out = os.fdopen(int(fd), "w", buffering=1, closefd=False) if fd else None

    def _emit(self, **event):
        if self._out is not None:
            try:
                self._out.write(json.dumps(event) + "\n")
            except OSError:  # the runner is gone (interrupted): the playbook goes on
                self._out = None

    def v2_playbook_on_play_start(self, play):
        self._emit(event="play", name=play.get_name().strip())

    def v2_playbook_on_no_hosts_matched(self):
        # The inventory has no host for this play (no schema registry among real hosts):
        # the runner says so rather than print a time as if the step had run.
        self._emit(event="no_hosts")

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._emit(event="task", name=task.get_name().strip())

    def v2_playbook_on_handler_task_start(self, task):
        self._emit(event="task", name=task.get_name().strip())

    def v2_runner_on_ok(self, result):
        # A debug task's message is something the playbook means the user to read.
        if result.task.action in ("debug", "ansible.builtin.debug") and "msg" in result.result:
            msg = result.result["msg"]
            lines = msg if isinstance(msg, list) else str(msg).splitlines()
            self._emit(event="note", host=result.host.get_name(), lines=[str(line) for line in lines])

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors:
            self._emit(event="failed", host=result.host.get_name(), task=result.task.get_name().strip(),
                       msg=_message(result.result))

    def v2_runner_on_unreachable(self, result):
        self._emit(event="failed", host=result.host.get_name(), task=result.task.get_name().strip(),
                   msg="unreachable: " + _message(result.result))

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed)
        self._emit(event="stats", changed={h: stats.summarize(h)["changed"] for h in hosts},
                   failed=[h for h in hosts if stats.summarize(h)["failures"] or stats.summarize(h)["unreachable"]])


def _message(result):
    """The failure's own words: its msg, else the first failed loop item's; for a command,
    its stderr (else stdout) rather than Ansible's "non-zero return code"."""
    msg = result.get("msg")
    if not msg:
        failed_items = [r for r in result.get("results", []) if isinstance(r, dict) and r.get("failed")]
        msg = failed_items[0].get("msg") if failed_items else None
    output = str(result.get("stderr") or result.get("stdout") or "").strip()
    if not msg or (msg == "non-zero return code" and output):
        msg = output or "failed"
    msg = str(msg)
    if len(msg) <= MSG_LIMIT:
        return msg
    # Its start says what failed; its end is often a log's last lines, which say why.
    return f"{msg[:MSG_LIMIT // 3]} [...] {msg[-MSG_LIMIT * 2 // 3:]}"


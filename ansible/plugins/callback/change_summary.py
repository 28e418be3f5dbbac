"""Print one closing line per playbook run: what changed, or that nothing did.

`make up` on a running cluster must say plainly that it changed nothing; the
recap's `changed=0` columns are easy to miss among a dozen hosts.
"""

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: change_summary
type: aggregate
short_description: one closing line saying how many tasks changed something
description:
  - After the play recap, prints "nothing changed" or the number of changed tasks per host.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "change_summary"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed.keys())
        changed = {h: stats.summarize(h)["changed"] for h in hosts}
        failed = [h for h in hosts if stats.summarize(h)["failures"] or stats.summarize(h)["unreachable"]]
        if failed:
            self._display.display(f"RESULT: failed on {', '.join(failed)}", color="red")
        elif not any(changed.values()):
            self._display.display("RESULT: nothing changed (already in the desired state)", color="green")
        else:
            parts = ", ".join(f"{h}={n}" for h, n in changed.items() if n)
            self._display.display(f"RESULT: {sum(changed.values())} change(s): {parts}", color="yellow")

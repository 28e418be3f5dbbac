"""Run a long-lived command and start it again when it crashes: the monitoring services
(the canary, the lag exporter) of the paths without Kubernetes, where nothing else would.

    python -m kafka_patterns.monitoring.supervise [--backoff SECONDS] -- COMMAND [ARG ...]

A crash is the child's death by a signal it was not sent here (SIGSEGV, SIGABRT, SIGKILL
from the OOM killer): librdkafka's native code can take a Python process down with no
traceback. Any exit of its own, 0 or an error (a wrong option fails fast, naming it),
ends the supervisor with the same code: restarting would only repeat the error. SIGTERM
and SIGINT go to the child; the supervisor exits when it does. A supervisor killed
outright (a stop that ran out of patience: SIGKILL) takes its child with it (Linux's
parent-death signal), so no orphan keeps the port.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import signal
import subprocess
import sys
import threading

log = logging.getLogger("kafka_patterns.monitoring.supervise")
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_the_supervisor() -> None:
    """In the child, before exec: SIGKILL when the supervisor dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def supervise(command: list[str], backoff: float = 5.0) -> int:
    stopping = threading.Event()
    child: subprocess.Popen | None = None

    def forward(signum, _frame) -> None:
        stopping.set()
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    # faulthandler in the child: a native crash leaves its Python stack in the log.
    command = [command[0], "-X", "faulthandler", *command[1:]] if command[0].endswith(("python", "python3")) \
        else command
    while True:
        # preexec_fn is safe here: the supervisor runs no other thread.
        child = subprocess.Popen(command, preexec_fn=_die_with_the_supervisor)
        code = child.wait()
        if stopping.is_set() or code >= 0:
            return code if code >= 0 else 128 - code
        log.error("supervise: %s died of %s; starting it again in %.0fs", " ".join(command),
                  signal.Signals(-code).name, backoff)
        if stopping.wait(backoff):
            return 128 - code


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    p = argparse.ArgumentParser(prog="python -m kafka_patterns.monitoring.supervise",
                                description=__doc__.splitlines()[0])
    p.add_argument("--backoff", type=float, default=5.0, help="seconds before a restart (default 5)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...]")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command: python -m kafka_patterns.monitoring.supervise -- COMMAND [ARG ...]")
    return supervise(command, args.backoff)


if __name__ == "__main__":
    sys.exit(main())

"""The three places a command can need running, each started when it is down and, when
this run started it, stopped again afterwards: the one rule behind `make test`, the
test tiers, `make run`, `make bench` and the rest.

    python -m platform_cli.environments cluster -- <command ...>         # start if down, stop after if started
    python -m platform_cli.environments cluster --keep -- <command ...>  # start if down, leave it running
    python -m platform_cli.environments is-up hosts                      # exit 0 when it is up
    python -m platform_cli.environments kubeconfig                       # the local Kubernetes' kubeconfig, if it runs

cluster: the local Kafka cluster with Connect, PostgreSQL, the registry and the
monitoring (make up / make down); kube: the local Kubernetes (make kube-up /
make kube-down); hosts: the example-hosts topology on test hosts (make hosts-up /
make hosts-down). The command gets KP_<NAME>_STARTED_BY_TEST=yes|no in its environment:
tests that take an environment down themselves do so only when the run started it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from kafka_patterns.config.catalogue import ROOT

RUN_DIR = ROOT / ".run"
KUBECONFIG = RUN_DIR / "kube" / "admin.kubeconfig"
KUBE_APISERVER_PID = RUN_DIR / "kube" / "run" / "kube-apiserver.pid"
HOSTS_INVENTORY = RUN_DIR / "hosts" / "inventory"
NETNS_HOSTS_DEFAULTS = ROOT / "ansible" / "roles" / "test_hosts" / "netns_hosts" / "defaults" / "main.yml"


class StartFailed(RuntimeError):
    """The make target that starts an environment failed (it printed why)."""


@dataclass(frozen=True)
class Environment:
    name: str
    what: str  # for messages: "the local cluster"
    up_target: str
    down_target: str
    is_up: Callable[[], bool]
    # Something of it is left to stop (a test may have taken it down already).
    is_present: Callable[[], bool]

    @property
    def started_variable(self) -> str:
        return f"KP_{self.name.upper()}_STARTED_BY_TEST"


def _quiet(argv: Sequence[str], timeout: float = 60) -> bool:
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def cluster_is_up() -> bool:
    """Every endpoint of the local inventory listens (kafka_patterns.config.inventory is-up)."""
    return _quiet([sys.executable, "-m", "kafka_patterns.config.inventory", "is-up"])


def _pid_alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text().strip()), 0)
    except (OSError, ValueError):
        return False
    return True


def kube_is_up() -> bool:
    return KUBECONFIG.is_file() and _pid_alive(KUBE_APISERVER_PID)


def netns_hosts_defaults() -> dict:
    return yaml.safe_load(NETNS_HOSTS_DEFAULTS.read_text())


def hosts_are_present() -> bool:
    prefix = netns_hosts_defaults()["netns_hosts_netns_prefix"]
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return any(line.startswith(prefix) for line in done.stdout.splitlines())


def hosts_are_up() -> bool:
    """Ansible reaches every test host over SSH. Asked only when the bridge has this
    machine's address: without it, the hosts' range would go out by the default route."""
    defaults = netns_hosts_defaults()
    if not (HOSTS_INVENTORY / "hosts.yml").is_file():
        return False
    addresses = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", defaults["netns_hosts_bridge"]],
                               capture_output=True, text=True, check=False).stdout
    if f" {defaults['netns_hosts_cidr']} " not in addresses:
        return False
    return _quiet(["ansible", "-i", str(HOSTS_INVENTORY), "all", "-m", "ansible.builtin.ping", "-o", "-T", "5"])


ENVIRONMENTS = {
    "cluster": Environment("cluster", "the local cluster", "up", "down", cluster_is_up, cluster_is_up),
    "kube": Environment("kube", "the local Kubernetes", "kube-up", "kube-down", kube_is_up, kube_is_up),
    "hosts": Environment("hosts", "the test hosts", "hosts-up", "hosts-down", hosts_are_up, hosts_are_present),
}


def make(*targets: str) -> int:
    """A make target of this checkout; setup is done when this runs (-o setup)."""
    return subprocess.run(["make", "-C", str(ROOT), "-o", "setup", *targets], check=False).returncode


@contextlib.contextmanager
def running(name: str, keep: bool = False) -> Iterator[bool]:
    """Environment `name` up for the block: started when down (StartFailed when that
    fails), stopped after when started here, unless keep. Yields whether it started it,
    and sets KP_<NAME>_STARTED_BY_TEST for the commands the block runs."""
    env = ENVIRONMENTS[name]
    started = not env.is_up()
    if started and make(env.up_target) != 0:
        raise StartFailed(f"make {env.up_target} failed: {env.what} did not start (its log is in .run/logs/)")
    previous = os.environ.get(env.started_variable)
    os.environ[env.started_variable] = "yes" if started else "no"
    try:
        yield started
    finally:
        if previous is None:
            os.environ.pop(env.started_variable, None)
        else:
            os.environ[env.started_variable] = previous
        if started and not keep and env.is_present():
            print(f"==> stopping {env.what}, which this run started", flush=True)
            if make(env.down_target) != 0:
                print(f"warning: make {env.down_target} failed: {env.what} may still be running", file=sys.stderr)


@contextlib.contextmanager
def running_all(names: Sequence[str], keep: bool = False) -> Iterator[None]:
    """Every environment of `names` up for the block: started in that order, stopped in
    the reverse one."""
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(running(name, keep=keep))
        yield


def run_in(names: Sequence[str], command: Sequence[str], keep: bool = False) -> int:
    """`command` with every environment of `names` up; its exit code, or 1 when an
    environment did not start."""
    try:
        with running_all(names, keep=keep):
            return subprocess.run(list(command), check=False).returncode
    except StartFailed as e:
        print(e, file=sys.stderr)
        return 1


def print_kubeconfig() -> int:
    if not kube_is_up():
        print("the local Kubernetes is not running: run make kube-up", file=sys.stderr)
        return 1
    print(KUBECONFIG)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["kubeconfig"]:
        return print_kubeconfig()
    if len(argv) == 2 and argv[0] == "is-up" and argv[1] in ENVIRONMENTS:
        return 0 if ENVIRONMENTS[argv[1]].is_up() else 1
    parser = argparse.ArgumentParser(prog="python -m platform_cli.environments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", help="cluster, kube or hosts; several joined by commas (started in that order)")
    parser.add_argument("--keep", action="store_true", help="leave what was started running")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    names = args.names.split(",")
    unknown = [n for n in names if n not in ENVIRONMENTS]
    if unknown:
        parser.error(f"unknown environment {', '.join(unknown)}: one of {', '.join(ENVIRONMENTS)}")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: python -m platform_cli.environments <names> [--keep] -- <command ...>")
    return run_in(names, command, keep=args.keep)


if __name__ == "__main__":
    sys.exit(main())

"""make up, hosts-up and hosts-down: site.yml's playbooks, in stages, on the local
cluster or on the test hosts, and taking the test hosts down again.

    python -m platform_cli.lifecycle up [--force]   # skipped when nothing changed (up_to_date)
    python -m platform_cli.lifecycle hosts-up       # the test hosts, then site.yml over SSH
    python -m platform_cli.lifecycle hosts-down     # their services stopped, the hosts deleted

--verbose (make V=1) shows the playbooks' output live. Quiet otherwise: a line per play,
everything in .run/logs/<target>.log.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from kafka_patterns.config import inventory
from platform_cli import environments, steps, up_to_date

PLAYBOOKS = environments.ROOT / "ansible" / "playbooks"
LOGS = environments.RUN_DIR / "logs"

# site.yml's playbooks in stages, those of a stage at once: the same plays as site.yml in
# an order that meets the same dependencies (PostgreSQL needs nothing of Kafka; Connect,
# the registry and the monitoring need its CA and users, not each other).
SITE_STAGES = (("bridge",), ("postgresql", "kafka"), ("connect", "schema-registry", "monitoring"))


def playbook(inventory_dir: Path, name: str, *extra: str) -> list[str]:
    return ["ansible-playbook", "-i", str(inventory_dir), *extra, str(PLAYBOOKS / f"{name}.yml")]


def site_stages(inventory_dir: Path) -> list[list[steps.Command]]:
    return [[(name, playbook(inventory_dir, name)) for name in stage] for stage in SITE_STAGES]


def one(inventory_dir: Path, name: str, *extra: str) -> list[list[steps.Command]]:
    return [[(name, playbook(inventory_dir, name, *extra))]]


def up(force: bool, verbose: bool) -> int:
    if not force and up_to_date.check() == 0:
        return 0
    up_to_date.forget()
    rc = steps.run(site_stages(inventory.inventory_path()), LOGS / "up.log", "make up", verbose)
    return rc or up_to_date.stamp()


def hosts_up(verbose: bool) -> int:
    started = time.monotonic()
    bridge = environments.netns_hosts_defaults()["netns_hosts_bridge"]
    log = LOGS / "hosts-up.log"
    rc = steps.run(one(inventory.inventory_path(), "hosts-up"), log,
                   f"test hosts: network namespaces with sshd on bridge {bridge}", verbose)
    if rc:
        return rc
    hosts = environments.HOSTS_INVENTORY
    rc = steps.run(site_stages(hosts), log, f"site.yml's playbooks over SSH with inventory {hosts}", verbose,
                   append=True)
    if rc == 0:
        print(f"==> the hosts are up in {time.monotonic() - started:.0f}s: ansible -i {hosts} all -m ping")
    return rc


def hosts_down(verbose: bool) -> int:
    hosts, log = environments.HOSTS_INVENTORY, LOGS / "hosts-down.log"
    if environments.hosts_are_up():
        if steps.run(one(hosts, "stop"), log, "stopping the services on the test hosts", verbose):
            print("    some services did not stop cleanly: they are killed with their hosts", file=sys.stderr)
    elif (hosts / "hosts.yml").is_file():
        # The hosts are gone or unreachable; the monitoring of them runs on this machine.
        steps.run(one(hosts, "stop", "--limit", "monitoring"), log,
                  "stopping the monitoring of the test hosts on this machine", verbose)
    bridge = environments.netns_hosts_defaults()["netns_hosts_bridge"]
    return steps.run(one(inventory.inventory_path(), "hosts-down"), log,
                     f"deleting the test hosts (namespaces and veths and bridge {bridge})", verbose, append=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m platform_cli.lifecycle", description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="the playbooks' output live (make V=1)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("up").add_argument("--force", action="store_true", help="run site.yml even when up to date")
    commands.add_parser("hosts-up")
    commands.add_parser("hosts-down")
    args = parser.parse_args(argv)
    if args.command == "up":
        return up(args.force, args.verbose)
    return hosts_up(args.verbose) if args.command == "hosts-up" else hosts_down(args.verbose)


if __name__ == "__main__":
    sys.exit(main())

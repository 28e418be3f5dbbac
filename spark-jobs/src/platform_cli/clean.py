"""make clean: stop everything the project started on this machine and remove its data;
the download and build caches stay (the Makefile removes .run/ once this succeeds).

    python -m platform_cli.clean

In order: the local Kubernetes and the test hosts when they have state, the local
cluster with its data when `make up` ever ran (stop.yml, purge_data), the project bridge, and the plain-text
baseline an interrupted `make bench` may have left (bench/plaintext_cluster.py). Each
step runs even when one before it failed; a failure is named, and exits non-zero so that
.run/ (the state the next try needs) is kept.
"""

from __future__ import annotations

import subprocess
import sys

from kafka_patterns.config import inventory
from kafka_patterns.config.catalogue import ROOT
from platform_cli import environments

PLAYBOOKS = ROOT / "ansible" / "playbooks"
LOGS = environments.RUN_DIR / "logs"


def stop_and_purge_the_cluster() -> int:
    playbook = ["ansible-playbook", "-i", str(inventory.inventory_path()), str(PLAYBOOKS / "stop.yml"),
                "-e", "purge_data=true"]
    return subprocess.run([sys.executable, "-m", "platform_cli.steps", "--log", str(LOGS / "clean.log"),
                           "--title", "make clean: stop and remove the data", "--", *playbook], check=False).returncode


def delete_the_bridge() -> int:
    done = subprocess.run(["ansible", "-i", str(inventory.inventory_path()), "all[0]", "-m",
                           "ansible.builtin.include_role", "-a", "name=host_bridge", "-e", "host_bridge_state=absent"],
                          stdout=subprocess.DEVNULL, check=False)
    if done.returncode:
        print("could not delete the project bridge: ip link delete dev kpbr0", file=sys.stderr)
    return done.returncode


def kill_the_plaintext_baseline() -> int:
    # [/]: the pattern does not match pkill's own command line.
    subprocess.run(["pkill", "-KILL", "-f", "--", f"{environments.RUN_DIR}/bench-plaintext[/]"], check=False)
    return 0


def main() -> int:
    steps = []
    if (environments.RUN_DIR / "kube").is_dir():
        steps.append(("make kube-down", lambda: environments.make("kube-down")))
    if (environments.RUN_DIR / "hosts").is_dir():
        steps.append(("make hosts-down", lambda: environments.make("hosts-down")))
    # `make up` writes the secrets before it starts anything: without them no service
    # of the local cluster ever ran here (and stop.yml could not read the inventory).
    if (environments.RUN_DIR / "secrets").is_dir():
        steps.append(("stopping the local cluster", stop_and_purge_the_cluster))
    steps += [("deleting the project bridge", delete_the_bridge),
              ("the plain-text baseline of make bench", kill_the_plaintext_baseline)]
    failed = [name for name, step in steps if step() != 0]
    if failed:
        print(f"make clean: {', '.join(failed)} failed; .run/ is kept for the next try (logs in .run/logs/)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

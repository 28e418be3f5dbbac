"""What the hosts tests know about the test hosts: the role's list of them, the paths
of the generated inventory and of the control machine's state, and whether they are up."""

from __future__ import annotations

import socket
import subprocess

import yaml

from helpers import ROOT, role_dir


def role_defaults(role: str) -> dict:
    return yaml.safe_load((role_dir(role) / "defaults" / "main.yml").read_text())


DEFAULTS = role_defaults("netns_hosts")
# The hosts as the role declares them: name, address, group (node_id, rack for Kafka).
HOSTS: list[dict] = DEFAULTS["netns_hosts_list"]
# The inventory's monitoring host: the control machine itself (connection local).
MONITORING_HOST: str = DEFAULTS["netns_hosts_monitoring_host"]
HOSTS_DIR = ROOT / ".run" / "hosts"
INVENTORY = HOSTS_DIR / "inventory"
CONTROL_ADDRESS = DEFAULTS["netns_hosts_cidr"].split("/")[0]
NETNS_PREFIX = DEFAULTS["netns_hosts_netns_prefix"]
BRIDGE = DEFAULTS["netns_hosts_bridge"]


def names(group: str) -> list[str]:
    return [h["name"] for h in HOSTS if h["group"] == group]


def spec(name: str) -> dict:
    return next(h for h in HOSTS if h["name"] == name)


def _ssh_answers(address: str, timeout: float = 2.0) -> bool:
    try:
        with socket.create_connection((address, 22), timeout=timeout) as s:
            s.settimeout(timeout)
            return s.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def bridge_is_up() -> bool:
    """The bridge has this machine's address: only then is 198.18.0.0/24 on it. Without
    it those addresses would go out by the default route, so nothing may dial them."""
    out = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", BRIDGE],
                         capture_output=True, text=True, check=False).stdout
    return f" {DEFAULTS['netns_hosts_cidr']} " in out


def hosts_down_reason() -> str | None:
    if not (INVENTORY / "hosts.yml").is_file():
        return f"the test hosts are not up (no {INVENTORY}): run `make hosts-up` or `make test-hosts`"
    if not bridge_is_up():
        return f"the test hosts are not up (no bridge {BRIDGE}): run `make hosts-up` or `make test-hosts`"
    silent = [h["name"] for h in HOSTS if not _ssh_answers(h["address"])]
    if silent:
        return f"the test hosts are not up (no sshd answers on {', '.join(silent)}): run `make hosts-up`"
    return None

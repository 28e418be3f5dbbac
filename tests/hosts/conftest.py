"""The hosts topology on the project's test hosts (`make test-hosts`).

The hosts are network namespaces of this machine with sshd on bridge kphosts0
(role netns_hosts, `make hosts-up`); every check on a host goes over SSH through the
generated inventory (.run/hosts/inventory), with testinfra's Ansible backend. When the
hosts are not up, every test is skipped and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import testinfra
from hosts_topology import HOSTS_DIR, INVENTORY, hosts_down_reason


# Every test of this directory: none may dial a host's address while the hosts are down.
@pytest.fixture(scope="session", autouse=True)
def hosts_up() -> None:
    reason = hosts_down_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def ssh(hosts_up):
    """ssh(name) -> the testinfra host of that test host, reached over SSH."""
    cache: dict[str, testinfra.host.Host] = {}

    def get(name: str):
        if name not in cache:
            # get_hosts maps an Ansible host to testinfra's ssh backend (its ansible_host,
            # user, key and ssh arguments); get_host would run every command as an Ansible task.
            (cache[name],) = testinfra.get_hosts([f"ansible://{name}"], ansible_inventory=str(INVENTORY))
        return cache[name]

    return get


@pytest.fixture(scope="session")
def control_dir() -> Path:
    """The control machine's state of this cluster: CA, passwords (platform_run_dir)."""
    return HOSTS_DIR / "control"

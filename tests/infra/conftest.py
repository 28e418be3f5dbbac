"""Infra tier: the running cluster checked through the same Ansible inventory.

Run with `make test-infra` (pytest --hosts='ansible://all' --ansible-inventory=...).
Host tests use testinfra's `host`; cluster-wide checks use the admin API and
Kafka's own tools.
"""

import pytest


@pytest.fixture
def hostvars(host) -> dict:
    return host.ansible.get_variables()

"""`make up` twice: the second run of site.yml changes nothing, and says nothing it
should not (Ansible warns about a duplicate key, a module option named like a secret...)."""

import re

import pytest

from helpers import run_playbook

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def second_run(cluster):
    """site.yml once more on the running cluster (about a minute: run once for both tests)."""
    return run_playbook("site.yml")


def test_a_second_site_run_reports_changed_0(second_run):
    assert second_run.returncode == 0, second_run.stdout[-3000:]
    recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", second_run.stdout, re.M)
    assert len(recap) == 7, recap  # 3 Kafka nodes, Connect, PostgreSQL, the monitoring, the schema registry
    assert {host: int(n) for host, n in recap if int(n)} == {}
    assert "RESULT: nothing changed" in second_run.stdout


def test_a_site_run_prints_no_ansible_warnings(second_run):
    output = second_run.stdout + (second_run.stderr or "")
    warnings = [line for line in output.splitlines() if re.match(r"\[(WARNING|DEPRECATION WARNING)\]", line)]
    assert warnings == [], "\n".join(warnings)

"""`make up` twice: the second run of site.yml changes nothing."""

import re

import pytest

from helpers import run_playbook

pytestmark = pytest.mark.slow


def test_a_second_site_run_reports_changed_0(cluster):
    result = run_playbook("site.yml")
    assert result.returncode == 0, result.stdout[-3000:]
    recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", result.stdout, re.M)
    assert len(recap) == 7, recap  # 3 Kafka nodes, Connect, PostgreSQL, the monitoring, the schema registry
    assert {host: int(n) for host, n in recap if int(n)} == {}
    assert "RESULT: nothing changed" in result.stdout

"""site.yml over SSH on the running hosts again: it changes nothing (the services as
user kafka, the ownership of their files, PostgreSQL's passwords and pg_hba included)."""

from __future__ import annotations

import re
import subprocess

import pytest
from hosts_topology import HOSTS, INVENTORY, MONITORING_HOST

from helpers import ROOT, VENV_BIN, ansible_env

pytestmark = pytest.mark.slow


def test_a_second_site_run_over_ssh_reports_changed_0(hosts_up):
    result = subprocess.run(
        [str(VENV_BIN / "ansible-playbook"), "-i", str(INVENTORY), str(ROOT / "ansible" / "playbooks" / "site.yml")],
        capture_output=True, text=True, timeout=900, env=ansible_env(), cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", result.stdout, re.M)
    assert {host for host, _ in recap} == {h["name"] for h in HOSTS} | {MONITORING_HOST}, recap
    changed = re.findall(r"^TASK \[(.*)\] \**\nchanged: \[(\S+)\]", result.stdout, re.M)
    assert {host: int(n) for host, n in recap if int(n)} == {}, changed
    assert "RESULT: nothing changed" in result.stdout

"""The Ansible side: every playbook passes --syntax-check, the playbooks and roles are
ansible-lint clean (and the Python ruff clean: make lint as a test), and the example
hosts inventory parses with the groups the roles expect."""

from __future__ import annotations

import json
import subprocess

import pytest
from manifests import ROOT

from helpers import LOCAL_INVENTORY, VENV_BIN, ansible_env

ANSIBLE_DIR = ROOT / "ansible"
PLAYBOOKS = sorted(p.name for p in (ANSIBLE_DIR / "playbooks").glob("*.yml"))
EXAMPLE_INVENTORY = ANSIBLE_DIR / "inventories" / "example-hosts"


def ansible(tool: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / tool), *args], capture_output=True, text=True, env=ansible_env(),
                          cwd=ANSIBLE_DIR, timeout=timeout, check=False)


def test_the_kubernetes_playbooks_exist():
    assert {"deploy-k8s.yml", "destroy-k8s.yml"} <= set(PLAYBOOKS)


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_playbook_passes_syntax_check(playbook):
    proc = ansible("ansible-playbook", "--syntax-check", "-i", str(LOCAL_INVENTORY), f"playbooks/{playbook}")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_playbooks_and_roles_are_ansible_lint_clean():
    # --offline: never reach Galaxy or refresh schemas; the rules are the pinned ones.
    proc = ansible("ansible-lint", "-q", "--offline", "playbooks", "roles", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_python_is_ruff_clean():
    # What `make lint` checks, with the rules of pyproject.toml; ruff is pinned there.
    proc = subprocess.run([str(VENV_BIN / "ruff"), "check", "--config", str(ROOT / "pyproject.toml"),
                           *(str(ROOT / d) for d in ("spark-jobs", "tests", "ansible", "bench", "pulumi", "helm"))],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_example_hosts_inventory_parses():
    proc = ansible("ansible-inventory", "-i", str(EXAMPLE_INVENTORY), "--list")
    assert proc.returncode == 0, proc.stderr
    groups = json.loads(proc.stdout)
    for group in ("kafka_controllers", "kafka_brokers", "kafka_connect", "postgresql", "monitoring"):
        assert groups.get(group, {}).get("hosts"), f"{EXAMPLE_INVENTORY.name} has no hosts in {group}"


@pytest.mark.parametrize("playbook", ["deploy-k8s.yml", "destroy-k8s.yml"])
def test_without_a_kube_context_the_kubernetes_playbooks_stop_naming_it(playbook, tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    proc = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(LOCAL_INVENTORY), f"playbooks/{playbook}"],
                          capture_output=True, text=True, cwd=ANSIBLE_DIR, timeout=300, check=False,
                          env={**ansible_env(), "KUBECONFIG": str(kubeconfig)})
    assert proc.returncode != 0
    assert "no Kubernetes context is configured" in proc.stdout + proc.stderr
    assert "pulumi up" not in proc.stdout and "pulumi destroy" not in proc.stdout


def test_the_local_stack_without_the_local_cluster_says_to_start_it(tmp_path):
    # The local stack reads only the local cluster's kubeconfig: point it at nothing.
    proc = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(LOCAL_INVENTORY), "playbooks/deploy-k8s.yml",
                           "-e", "stack=local", "-e", f"k8s_kubeconfig={tmp_path / 'admin.kubeconfig'}"],
                          capture_output=True, text=True, cwd=ANSIBLE_DIR, timeout=300, check=False,
                          env=ansible_env())
    assert proc.returncode != 0
    assert "the local Kubernetes is not up: run `make kube-up`" in proc.stdout + proc.stderr
    assert "pulumi" not in proc.stdout

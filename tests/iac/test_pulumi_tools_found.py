"""A Pulumi the user installed is used, and nothing is built (role pulumi_tool, module
pulumi_installed): a CLI on PATH no older than the program's Python SDK, the language
host beside it, a provider of the pinned version in the user's plugin directory. An
older CLI is not used. The role runs for real; its builds are made impossible (no Go, an
empty cache), so a run that decided to build fails."""

from __future__ import annotations

import os
import subprocess
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest
from manifests import load_module

from helpers import ROOT, VENV_BIN, ansible_env, role_dir
from kafka_patterns.config import catalogue

pulumi_installed = load_module("kp_pulumi_installed",
                               role_dir("pulumi_tool") / "library" / "pulumi_installed.py")
SDK = version("pulumi")
PROVIDER = catalogue.versions()["pulumi_kubernetes_version"]
TOOLS = ("pulumi", "pulumi-language-python", "pulumi-resource-kubernetes")


def executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def user_install(root: Path, cli_version: str) -> dict[str, Path]:
    """What Pulumi's installer and `pulumi plugin install` leave: ~/.pulumi/bin with the
    CLI, the language host and its exec script; the provider under plugins/."""
    bin_dir = root / ".pulumi" / "bin"
    return {
        "pulumi": executable(bin_dir / "pulumi", f"echo {cli_version}"),
        "pulumi-language-python": executable(bin_dir / "pulumi-language-python", "echo host"),
        "exec": executable(bin_dir / "pulumi-language-python-exec", "echo exec"),
        "pulumi-resource-kubernetes": executable(
            root / ".pulumi" / "plugins" / f"resource-kubernetes-v{PROVIDER}" / "pulumi-resource-kubernetes",
            "echo provider"),
    }


def run_role(tmp_path: Path, home: Path) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / "play" / "pulumi-tools.yml"
    playbook.parent.mkdir()
    playbook.write_text(textwrap.dedent("""\
        - hosts: localhost
          connection: local
          gather_facts: false
          roles: [pulumi_tool]
        """))
    env = {**ansible_env(),
           "PATH": os.pathsep.join([str(home / ".pulumi" / "bin"), str(VENV_BIN), "/usr/bin", "/bin"]),
           "PULUMI_HOME": str(home / ".pulumi"),
           "XDG_CACHE_HOME": str(tmp_path / "empty-cache"),
           "GO": str(tmp_path / "no-go")}
    return subprocess.run(
        [str(VENV_BIN / "ansible-playbook"), "-i", "localhost,", str(playbook),
         "-e", f"@{catalogue.VERSIONS_FILE}", "-e", f"pulumi_tool_root={ROOT}",
         "-e", f"pulumi_tool_link_dir={tmp_path / 'links'}"],
        capture_output=True, text=True, env=env, cwd=ROOT / "ansible", timeout=300)


@pytest.mark.slow
def test_a_compatible_user_pulumi_is_linked_and_nothing_is_built(tmp_path: Path) -> None:
    installed = user_install(tmp_path / "home", f"v{SDK}")
    proc = run_role(tmp_path, tmp_path / "home")
    assert proc.returncode == 0, proc.stdout[-3000:]
    for name in TOOLS:
        assert (tmp_path / "links" / name).resolve() == installed[name].resolve(), name
    assert "nothing to build" in proc.stdout
    assert not (tmp_path / "empty-cache" / "kafka-patterns" / "bin").exists()


@pytest.mark.slow
def test_a_user_pulumi_older_than_the_sdk_is_not_used(tmp_path: Path) -> None:
    user_install(tmp_path / "home", "v3.100.0")
    proc = run_role(tmp_path, tmp_path / "home")
    # It is passed over, so the CLI is to be built: with no Go here that stops, naming Go.
    assert proc.returncode != 0
    assert f"it is v3.100.0; the Python SDK {SDK} needs a 3.x CLI of at least {SDK}" in proc.stdout
    assert "Go" in proc.stdout
    assert not (tmp_path / "links").exists()


@pytest.mark.parametrize(("printed", "fits"), [
    (f"v{SDK}\n", True),
    ("v3.999.0", True),
    ("v3.100.0", False),
    ("v4.0.0", False),
    ("warning: something\n", False),
])
def test_the_cli_rule_is_the_automation_apis(printed: str, fits: bool) -> None:
    assert (pulumi_installed.cli_verdict(printed, SDK) is None) is fits


def test_the_projects_own_links_are_not_taken_for_a_users_install(tmp_path: Path) -> None:
    links = tmp_path / "links"
    executable(links / "pulumi", f"echo v{SDK}")
    found = pulumi_installed.find(str(links), [str(links)], SDK, PROVIDER, str(tmp_path / "plugins"))
    assert found["found"] == {}


def test_a_cli_without_its_language_host_is_used_and_the_host_is_not(tmp_path: Path) -> None:
    cli = executable(tmp_path / "bin" / "pulumi", f"echo v{SDK}")
    found = pulumi_installed.find(str(cli.parent), [], SDK, PROVIDER, str(tmp_path / "plugins"))
    assert found["found"] == {"pulumi": str(cli)}
    assert "pulumi-language-python-exec" in found["skipped"]["pulumi-language-python"]

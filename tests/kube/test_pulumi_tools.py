"""The Pulumi tools `make deploy` builds (role pulumi_tool) against the real local
Kubernetes: the CLI, the Python language host and the kubernetes provider linked into
.cache/bin are the pinned versions, and together, with no plugin download and no
network, they create an object on the API server, see no change on a second run and
delete it again. The project's program is not used: this is the tools' own proof.

Needs the local cluster (`make kube-up`) and `make deploy STACK=local` (which builds and
links the tools)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from helpers import ROOT, load_module, role_dir
from kafka_patterns.config import catalogue

BIN = ROOT / ".cache" / "bin"
PULUMI_INSTALLED = role_dir("pulumi_tool") / "library" / "pulumi_installed.py"
NAMESPACE = "default"
CONFIG_MAP = "kp-pulumi-tools-probe"
VERSIONS = catalogue.versions()


def pulumi_env(state: Path, kubeconfig: Path) -> dict[str, str]:
    """A file backend, no update check, no plugin download (a missing or mismatched
    plugin then fails instead of reaching for the network)."""
    return {**os.environ,
            "PATH": f"{BIN}:{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
            "PULUMI_BACKEND_URL": f"file://{state}",
            "PULUMI_CONFIG_PASSPHRASE": "tools-probe",
            "PULUMI_HOME": str(state / "home"),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "KUBECONFIG": str(kubeconfig)}


def pulumi(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(BIN / "pulumi"), *args, "--non-interactive"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"pulumi {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A one-resource Python program run with the project's venv (its pulumi and
    pulumi-kubernetes pins)."""
    (tmp_path / "Pulumi.yaml").write_text(textwrap.dedent(f"""\
        name: kp-tools-probe
        runtime:
          name: python
          options:
            toolchain: pip
            virtualenv: {ROOT / '.venv'}
        """))
    (tmp_path / "__main__.py").write_text(textwrap.dedent(f"""\
        import pulumi_kubernetes as k8s

        k8s.core.v1.ConfigMap("probe", metadata={{"name": "{CONFIG_MAP}", "namespace": "{NAMESPACE}"}},
                              data={{"made-by": "pulumi"}})
        """))
    return tmp_path


def built_here(link: Path) -> bool:
    """A link to the user-level cache's build, not to a Pulumi the user installed
    (tests/iac/test_pulumi_tools_found.py covers when that one is used)."""
    return link.resolve().parent.name == "bin" and link.resolve().name.startswith(f"{link.name}-v")


def test_the_linked_tools_are_the_pinned_versions() -> None:
    for name in ("pulumi", "pulumi-language-python", "pulumi-resource-kubernetes"):
        assert (BIN / name).exists(), f"{BIN / name} is missing: run make deploy STACK=local"
    version = subprocess.run([str(BIN / "pulumi"), "version"], capture_output=True, text=True, timeout=60)
    if built_here(BIN / "pulumi"):
        assert version.stdout.strip() == f"v{VERSIONS['pulumi_version']}"
    else:
        rule = load_module("kp_pulumi_installed", PULUMI_INSTALLED)
        assert rule.cli_verdict(version.stdout, importlib.metadata.version("pulumi")) is None
    if built_here(BIN / "pulumi-language-python"):
        host = subprocess.run([str(BIN / "pulumi-language-python"), "-version"], capture_output=True, text=True,
                              timeout=60)
        assert host.stdout.strip() == f"v{VERSIONS['pulumi_language_python_version']}"
    provider = (BIN / "pulumi-resource-kubernetes").resolve()
    assert f"-v{VERSIONS['pulumi_kubernetes_version']}" in str(provider), provider


def test_the_engine_language_host_and_provider_create_and_delete_an_object_offline(
        project: Path, tmp_path_factory: pytest.TempPathFactory, kubeconfig: Path, kubectl) -> None:
    state = tmp_path_factory.mktemp("pulumi-state")
    env = pulumi_env(state, kubeconfig)
    pulumi(project, env, "stack", "init", "probe")
    try:
        pulumi(project, env, "up", "--yes", "--skip-preview")
        made = kubectl("-n", NAMESPACE, "get", "configmap", CONFIG_MAP, "-o", "jsonpath={.data.made-by}", check=True)
        assert made.stdout == "pulumi"
        # --expect-no-changes: the preview fails when it would change anything.
        pulumi(project, env, "preview", "--expect-no-changes")
    finally:
        pulumi(project, env, "destroy", "--yes", "--skip-preview")
    gone = kubectl("-n", NAMESPACE, "get", "configmap", CONFIG_MAP, "--ignore-not-found", "-o", "name", check=True)
    assert gone.stdout.strip() == ""

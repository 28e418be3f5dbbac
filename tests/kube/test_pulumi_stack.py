"""The local stack as `make deploy STACK=local` left it, through Pulumi's own engine: the
preview and a refresh find nothing to change, no password of the stack is in clear in the
state, the stack outputs or the deploy's log, and an object the stack owns, deleted by
hand, is put back by the next `make deploy`.

Needs the local cluster (`make kube-up`) and `make deploy STACK=local`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT

PULUMI_DIR = ROOT / ".run" / "pulumi"
PROJECT_DIR = PULUMI_DIR / "project"
STATE_FILE = PULUMI_DIR / "state" / ".pulumi" / "stacks" / "kafka-patterns" / "local.json"
BIN = ROOT / ".cache" / "bin"
ACCESS = ROOT / ".run" / "pods-access"


@pytest.fixture(scope="module")
def pulumi(kubeconfig: Path):
    """pulumi(*args) in the local stack's project, as role k8s_pulumi runs it."""
    if not (PROJECT_DIR / "Pulumi.local.yaml").is_file():
        pytest.fail(f"{PROJECT_DIR} has no local stack: run make deploy STACK=local")
    env = {**os.environ,
           "PATH": f"{BIN}:{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
           "PULUMI_BACKEND_URL": f"file://{PULUMI_DIR / 'state'}",
           "PULUMI_CONFIG_PASSPHRASE_FILE": str(PULUMI_DIR / "passphrase"),
           "PULUMI_HOME": str(PULUMI_DIR / "home"),
           "PULUMI_SKIP_UPDATE_CHECK": "true",
           "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
           "KUBECONFIG": str(kubeconfig)}

    def run(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(BIN / "pulumi"), *args, "--stack", "local", "--non-interactive"],
                              cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"pulumi {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    return run


def stack_passwords() -> dict[str, str]:
    """Every password the stack puts into the cluster: the Kafka users', PostgreSQL's and
    the schema registry users' (what `make up` wrote)."""
    files = [*sorted((ACCESS / "users").glob("*.password")), *sorted(ACCESS.glob("postgres-*.password")),
             *sorted((ROOT / ".run" / "kafka-access").glob("registry-*.password"))]
    found = {f.name: f.read_text().strip() for f in files}
    assert len(found) > 10, f"expected the stack's passwords under {ACCESS}: run make up"
    return found


def test_a_preview_after_the_deploy_finds_nothing_to_change(pulumi):
    preview = pulumi("preview", "--expect-no-changes", "--diff")
    assert "unchanged" in preview.stdout


def test_a_refresh_after_the_deploy_finds_no_drift(pulumi):
    # --preview-only: compares the state with the cluster, writes nothing.
    refresh = pulumi("refresh", "--preview-only", "--expect-no-changes")
    assert "unchanged" in refresh.stdout


def test_no_password_is_in_clear_in_the_state_the_outputs_or_the_deploy_log(pulumi):
    state = STATE_FILE.read_text()
    json.loads(state)
    outputs = pulumi("stack", "output", "--json").stdout
    log = (ROOT / ".run" / "logs" / "deploy.log").read_text()
    assert '"ciphertext"' in state, "the state holds no secret at all"
    for name, password in stack_passwords().items():
        encoded = base64.b64encode(password.encode()).decode()
        for where, text in (("the state file", state), ("pulumi stack output", outputs), ("the deploy log", log)):
            assert password not in text and encoded not in text, f"{name} is in clear in {where}"


def test_make_deploy_puts_back_an_object_of_the_stack_deleted_by_hand(kubectl):
    # The cdc password of the bring-your-own release: no pod of that release reads it
    # (Connect runs on the host), so deleting it disturbs nothing else.
    namespace, name = "kafka-patterns", "postgresql-cdc"
    before = kubectl("-n", namespace, "get", "secret", name, "-o", "jsonpath={.data.password}", check=True).stdout
    kubectl("-n", namespace, "delete", "secret", name, check=True)
    deploy = subprocess.run(["make", "-C", str(ROOT), "deploy", "STACK=local"], capture_output=True, text=True,
                            timeout=1800)
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
    after = kubectl("-n", namespace, "get", "secret", name, "-o", "jsonpath={.data.password}", check=True).stdout
    assert after == before
    assert base64.b64decode(after).decode() == (ACCESS / "postgres-cdc.password").read_text().strip()

"""No password of the running cluster is in a file git tracks: every one is generated at
`make up` into a 0600 file under the run directory (the local default included)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers import ROOT


def password_files(run_dir: Path) -> list[Path]:
    """Every *.password file of the cluster's state; the local Kubernetes' tree (images,
    containers coming and going) is not walked."""
    found = []
    for top, dirs, files in os.walk(run_dir):
        if Path(top) == run_dir and "kube" in dirs:
            dirs.remove("kube")
        found += [Path(top) / f for f in files if f.endswith(".password")]
    return sorted(found)


def test_no_password_of_the_running_cluster_is_in_a_tracked_file(cluster):
    files = password_files(cluster.run_dir)
    secrets = {p.read_text().strip(): p for p in files}
    secrets |= {cluster.postgres_password: "postgresql_app_password",
                cluster.postgres_replication_password: "postgresql_replication_password"}
    assert {"postgresql_app_password", "postgresql_replication_password"} <= set(map(str, secrets.values()))
    assert len(files) >= 3 and all(len(s) >= 16 for s in secrets), "a password too short to search for"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in filter(None, tracked.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        found += [(name, str(where)) for secret, where in secrets.items() if secret.encode() in data]
    assert not found, f"passwords in tracked files (file, whose): {found}"


def test_the_generated_postgresql_passwords_are_private(cluster):
    for name in ("postgres-app.password", "postgres-cdc.password"):
        path = cluster.run_dir / "secrets" / name
        assert path.read_text().strip() in (cluster.postgres_password, cluster.postgres_replication_password)
        assert path.stat().st_mode & 0o777 == 0o600, oct(path.stat().st_mode)
        assert path.parent.stat().st_mode & 0o777 == 0o700

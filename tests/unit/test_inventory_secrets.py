"""A failing test prints its fixtures: the cluster fixture's repr must not hold a password."""

import json
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, VENV_BIN, ansible_env
from kafka_patterns.config.inventory import FILE_LOOKUP, Cluster, MissingSecret, resolve


def test_the_cluster_repr_shows_no_password():
    cluster = Cluster(nodes=(), connect_urls=(), postgres_host="127.0.0.1", postgres_port=15432, postgres_db="db",
                      postgres_user="app", postgres_password="app-secret", run_dir=Path("/tmp"),
                      postgres_replication_password="cdc-secret")
    assert "secret" not in repr(cluster)
    assert "password=app-secret" in cluster.postgres_dsn  # still there for the connection itself


def test_a_password_under_the_run_directory_is_read_from_its_file(tmp_path):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "postgres-app.password").write_text("generated-secret\n")
    value = "{{ lookup('ansible.builtin.file', platform_run_dir ~ '/secrets/postgres-app.password') }}"
    assert resolve(value, tmp_path) == "generated-secret"
    assert resolve(f"{{{{ lookup('file', '{tmp_path}/secrets/postgres-app.password') }}}}") == "generated-secret"
    assert resolve("a-plain-value") == "a-plain-value"


def test_a_missing_password_file_names_the_file_and_the_fix(tmp_path):
    value = "{{ lookup('ansible.builtin.file', platform_run_dir ~ '/secrets/postgres-cdc.password') }}"
    with pytest.raises(MissingSecret, match=r"secrets/postgres-cdc.password does not exist: `make up` generates it"):
        resolve(value, tmp_path)


def test_the_local_inventory_holds_no_password():
    """The local default's PostgreSQL passwords are generated (playbooks/postgresql.yml)."""
    listing = json.loads(subprocess.run(
        [str(VENV_BIN / "ansible-inventory"), "-i", str(ROOT / "ansible" / "inventories" / "local"), "--list"],
        capture_output=True, text=True, check=True, env=ansible_env(), cwd=ROOT / "ansible").stdout)
    pg = listing["_meta"]["hostvars"]["postgres-1"]
    for key in ("postgresql_app_password", "postgresql_replication_password"):
        assert FILE_LOOKUP.match(pg[key]), f"{key} is not read from a generated file: {pg[key]!r}"
    assert len(pg["platform_generated_passwords"]) == 2

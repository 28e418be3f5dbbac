"""The pins and the Spark image's build context (spark-jobs/tools): every Python package
pinned once, in pyproject.toml; pyspark at versions.yml's spark_version; the
image installs exactly the jobs' runtime dependencies and holds the package, the
catalogue, the launcher and the connector jars pyspark lacks."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bench import streams_peer
from helpers import ROOT

sys.path.insert(0, str(ROOT / "spark-jobs" / "tools"))

import built_images
import image_context
import pins

from kafka_patterns.config import catalogue

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())
SPARK_VERSION = VERSIONS["spark_version"]


def names(requirements: list[str]) -> list[str]:
    return [pins.normalized(r.split("==")[0]) for r in requirements]


def test_the_venv_requirements_hold_every_pin_once() -> None:
    requirements = pins.venv()
    assert len(set(names(requirements))) == len(requirements), requirements
    assert set(PROJECT["dependencies"]) | set(PROJECT["optional-dependencies"]["platform"]) < set(requirements)
    assert all("==" in r for r in requirements)


@pytest.mark.parametrize(("package", "key"), pins.FOLLOWERS.items())
def test_a_follower_package_takes_its_versions_yml_pin(package: str, key: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """pyspark follows spark_version, pulumi-kubernetes the provider's version: typed once."""
    assert package not in names(PROJECT["dependencies"] + PROJECT["optional-dependencies"]["platform"])
    assert f"{package}=={VERSIONS[key]}" in pins.venv()
    versions = tmp_path / "versions.yml"
    pinned = {k: VERSIONS[k] for k in pins.FOLLOWERS.values()} | {key: "9.8.7"}
    versions.write_text("".join(f'{k}: "{v}"\n' for k, v in pinned.items()))
    monkeypatch.setattr(pins, "VERSIONS", versions)
    assert [r for r in pins.venv() if r.startswith(f"{package}==")] == [f"{package}==9.8.7"]


def test_versions_yml_pins_no_python_package() -> None:
    assert "python_packages" not in pins.versions(), "Python packages are pinned in pyproject.toml"


@pytest.mark.parametrize(("dependency", "error"), [
    ("pyyaml>=6", "pin exactly with ==, not pyyaml>=6"),
    ("pyspark==4.2.0", "pinned twice: pyspark"),
    ("PyYAML==6.0.3", "pinned twice: pyyaml"),
])
def test_a_loose_or_doubled_pin_fails_naming_it(dependency: str, error: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\ndependencies = ["pyyaml==6.0.3", "{dependency}"]\n'
                         '[project.optional-dependencies]\nplatform = []\n')
    monkeypatch.setattr(pins, "PYPROJECT", pyproject)
    with pytest.raises(pins.ToolError, match=error):
        pins.venv()


def test_before_the_venv_only_pyyamls_pin_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """make setup installs PyYAML first, at its pin, read without PyYAML; whatever needs
    versions.yml before that says to run make setup."""
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml fails
    assert pins.bootstrap() in PROJECT["dependencies"]
    assert pins.bootstrap().startswith("pyyaml==")
    with pytest.raises(pins.ToolError, match=r"PyYAML is not installed .*: run make setup"):
        pins.pin("spark_version")


# --- the image context ----------------------------------------------------------------

CONNECTOR = [f"spark-sql-kafka-0-10_2.13-{SPARK_VERSION}.jar",
             f"spark-token-provider-kafka-0-10_2.13-{SPARK_VERSION}.jar",
             "kafka-clients-3.9.2.jar", "commons-pool2-2.13.1.jar"]
SHIPPED_BY_PYSPARK = ["slf4j-api-1.7.36.jar", "scala-library-2.13.15.jar"]


@pytest.fixture
def setup_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What `make setup` leaves for the image: the connector's jars in the cache, pyspark's
    own jars (a different version of some of them); returns the context directory."""
    jar_dir = tmp_path / "cache" / f"spark-kafka-{SPARK_VERSION}"
    jar_dir.mkdir(parents=True)
    for jar in CONNECTOR + SHIPPED_BY_PYSPARK:
        (jar_dir / jar).write_text(jar)
    spark_jars = tmp_path / "pyspark" / "jars"
    spark_jars.mkdir(parents=True)
    for jar in ("slf4j-api-2.0.17.jar", "scala-library-2.13.16.jar", "spark-core_2.13-4.2.0.jar"):
        (spark_jars / jar).write_text(jar)
    monkeypatch.setattr(image_context, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(image_context, "pyspark_jars", lambda: spark_jars)
    return tmp_path / "context"


def content_key(context: Path) -> str:
    """Paths, modes and contents, as role kube_images keys the image."""
    digest = hashlib.sha256()
    for path in sorted(context.rglob("*")):
        digest.update(f"{path.relative_to(context)} {path.stat().st_mode:o}\n".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_the_image_context_holds_package_catalogue_launcher_and_jars(setup_done: Path) -> None:
    image_context.build(setup_done)
    package = image_context.PACKAGE
    sources = {p.relative_to(package) for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert {p.relative_to(setup_done / "kafka_patterns") for p in (setup_done / "kafka_patterns").rglob("*")
            if p.is_file()} == sources
    declarations = ROOT / "catalogue"
    for source in [p for p in declarations.rglob("*") if p.is_file() and "__pycache__" not in p.parts]:
        name = source.relative_to(declarations)
        assert (setup_done / "catalogue" / name).read_bytes() == source.read_bytes(), name
    assert (setup_done / "run_job.py").read_bytes() == (ROOT / "spark-jobs" / "docker" / "run_job.py").read_bytes()
    # Only the jars whose artifact pyspark does not ship: none twice on Spark's classpath.
    assert sorted(p.name for p in (setup_done / "spark-kafka-jars").iterdir()) == sorted(CONNECTOR)


def test_the_image_context_holds_every_query_the_catalogue_names(setup_done: Path) -> None:
    """A SQL stream's job finds its .sql file next to the catalogue, in the image too."""
    image_context.build(setup_done)
    named = {j.sql for j in catalogue.job_specs().values() if j.sql}
    assert named
    for path in named:
        assert (setup_done / "catalogue" / path).read_bytes() == (ROOT / "catalogue" / path).read_bytes(), path


def test_the_image_installs_exactly_the_runtime_dependencies(setup_done: Path) -> None:
    image_context.build(setup_done)
    assert (setup_done / "requirements.txt").read_text().splitlines() == PROJECT["dependencies"]


def test_the_image_context_is_the_same_every_run(setup_done: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Its content is the image's cache key: no byte code, normalised modes, nothing left
    over from an earlier run."""
    package = tmp_path / "src" / "kafka_patterns"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    (package / "__init__.py").chmod(0o600)
    monkeypatch.setattr(image_context, "PACKAGE", package)
    image_context.build(setup_done)
    key = content_key(setup_done)
    (setup_done / "left-over").write_text("")
    image_context.build(setup_done)
    assert content_key(setup_done) == key
    assert not list(setup_done.rglob("*.pyc")) and not (setup_done / "left-over").exists()
    assert {p.stat().st_mode & 0o777 for p in setup_done.rglob("*") if p.is_file()} == {0o644}
    assert {p.stat().st_mode & 0o777 for p in [setup_done, *setup_done.rglob("*")] if p.is_dir()} == {0o755}


def test_without_make_setup_the_context_says_so(setup_done: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(image_context, "CACHE", tmp_path / "empty-cache")
    assert image_context.main([str(setup_done)]) == 1
    jar_dir = tmp_path / "empty-cache" / f"spark-kafka-{SPARK_VERSION}"
    assert f"no jars in {jar_dir}: run make setup" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(pins.ToolError, match=r"pyspark is not importable .*: run make setup"):
        image_context.pyspark_jars()


def test_the_docker_command_tags_the_image_as_the_chart_names_it(setup_done: Path) -> None:
    chart = yaml.safe_load((ROOT / "helm" / "kafka-patterns" / "values.yaml").read_text())
    command = image_context.docker_build_command(setup_done)
    assert f"--build-arg SPARK_VERSION={SPARK_VERSION} " in command
    assert f" -t {chart['spark']['image']['repository']}:{SPARK_VERSION} " in command


def test_make_image_ends_with_the_images_and_the_docker_command(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    tarball = tmp_path / "kafka-patterns-spark.tar"
    tarball.write_bytes(b"\0" * 2_500_000)
    manifest = tmp_path / "kube-images.json"
    manifest.write_text(f'[{{"ref": "docker.io/library/kafka-patterns-spark:x", "tarball": "{tarball}"}}]')
    monkeypatch.setattr(built_images, "MANIFEST", manifest)
    monkeypatch.setattr(built_images, "CONTAINERD_SOCKET", tmp_path / "no.sock")
    lines = built_images.summary()
    assert lines[0] == f"    docker.io/library/kafka-patterns-spark:x: 0.00 GB, {tarball}"
    assert "the local cluster is not running" in lines[1]
    assert image_context.docker_build_command(built_images.CONTEXT) in lines[2]


def test_the_venv_is_made_from_python3_when_set_else_a_recent_distribution_python(monkeypatch, tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("venv_tool", ROOT / "spark-jobs" / "tools" / "venv.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.minimum_python() == (3, 11), "pyproject's requires-python, read as a tuple"
    monkeypatch.setenv("PYTHON3", "/opt/python/bin/python3")
    assert tool.base_python() == "/opt/python/bin/python3"
    monkeypatch.delenv("PYTHON3")
    for name, exit_code, chosen in [("old", 1, sys.executable), ("recent", 0, str(tmp_path / "recent"))]:
        python = tmp_path / name  # answers the version check with its exit code
        python.write_text(f"#!/bin/sh\nexit {exit_code}\n")
        python.chmod(0o755)
        monkeypatch.setattr(tool, "DISTRIBUTION_PYTHON", python)
        assert tool.base_python() == chosen, name


def test_the_streams_peers_pom_pins_no_version_of_its_own() -> None:
    # Every dependency and plugin version comes from versions.yml (bench/streams_peer.PINS).
    pom = (ROOT / "bench" / "streams" / "pom.xml").read_text()
    versions = re.findall(r"<version>([^<]*)</version>", pom)
    assert versions[0] == "0", "the project's own version comes first"
    assert versions[1:] and all(v.startswith("${") for v in versions[1:]), versions
    assert {v[2:-1] for v in versions[1:]} == set(streams_peer.PINS)


def test_ansible_reads_the_one_versions_file_through_a_link() -> None:
    # A copy would drift: 5b5cda0 turned the link into a file that missed later pins.
    link = ROOT / "ansible" / "playbooks" / "group_vars" / "all" / "versions.yml"
    assert link.is_symlink(), f"{link} must be a symbolic link to catalogue/versions.yml, not a copy"
    assert link.resolve() == (ROOT / "catalogue" / "versions.yml").resolve()

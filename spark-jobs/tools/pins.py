"""The project's pins, for Make and the image tools: Python packages from
pyproject.toml, everything else (spark_version, ...) from catalogue/versions.yml.

    python3 spark-jobs/tools/pins.py bootstrap                  # PyYAML's pin (before the venv has it)
    .venv/bin/python spark-jobs/tools/pins.py requirements      # the venv's requirements
    .venv/bin/python spark-jobs/tools/pins.py pin spark_version # one pin of versions.yml

versions.yml is read with PyYAML, never parsed by hand. `make setup` creates the venv
with python3 alone, so it first installs PyYAML at its pin, read from pyproject.toml
with the standard library's tomllib (`bootstrap`: the only command that runs without
PyYAML), then everything else from `requirements`.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
VERSIONS = ROOT / "catalogue" / "versions.yml"
EXACT_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;,]+)$")


class ToolError(Exception):
    """What the user fixes: a pin missing, loose or declared twice, or `make setup` not run."""


def normalized(name: str) -> str:
    """The package name as pip compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _name(pinned: str) -> str:
    return normalized(EXACT_PIN.match(pinned)[1])


def project() -> dict[str, Any]:
    return tomllib.loads(PYPROJECT.read_text())["project"]


def _pinned(requirements: list[str]) -> list[str]:
    """The requirements, each checked to be an exact `name==version`."""
    loose = [r for r in requirements if not EXACT_PIN.match(r)]
    if loose:
        raise ToolError(f"{PYPROJECT}: pin exactly with ==, not {', '.join(loose)}")
    return requirements


def runtime() -> list[str]:
    """What the jobs import at runtime: pyproject's dependencies, the Spark image's requirements."""
    return _pinned(project()["dependencies"])


def platform() -> list[str]:
    """The venv's tooling: pyproject's `platform` extra."""
    return _pinned(project()["optional-dependencies"]["platform"])


def load_yaml(path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise ToolError(f"PyYAML is not installed for {sys.executable}: run make setup "
                        "(then use .venv/bin/python)") from None
    return yaml.safe_load(path.read_text())


def versions() -> dict[str, Any]:
    return load_yaml(VERSIONS)


def pin(name: str) -> str:
    value = versions().get(name)
    if not isinstance(value, str) or not value:
        raise ToolError(f"{VERSIONS}: no quoted pin {name}")
    return value


# Python packages that follow a pin of versions.yml: pinned once there, for the package
# and what must match it (the Spark image and connector jars; the kubernetes provider
# the Pulumi engine starts for the SDK's version).
FOLLOWERS = {"pyspark": "spark_version", "pulumi-kubernetes": "pulumi_kubernetes_version"}


def venv() -> list[str]:
    """The venv's requirements: runtime + platform, and the FOLLOWERS at their versions.yml pins."""
    requirements = [*runtime(), *platform(), *(f"{name}=={pin(key)}" for name, key in FOLLOWERS.items())]
    names = [_name(r) for r in requirements]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        follow = ", ".join(f"{name} follows {key}" for name, key in FOLLOWERS.items())
        raise ToolError(f"{PYPROJECT}: pinned twice: {', '.join(twice)} ({follow} of {VERSIONS})")
    return requirements


def bootstrap() -> str:
    """PyYAML's pin, read with tomllib only."""
    found = [r for r in runtime() if _name(r) == "pyyaml"]
    if not found:
        raise ToolError(f"{PYPROJECT}: pyyaml is not among the dependencies")
    return found[0]


def main(argv: list[str]) -> int:
    try:
        match argv:
            case ["bootstrap"]:
                print(bootstrap())
            case ["requirements"]:
                print("\n".join(venv()))
            case ["pin", name]:
                print(pin(name))
            case _:
                print(__doc__, file=sys.stderr)
                return 2
    except ToolError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The project's virtualenv, made with python3 alone (the standard library: nothing is
installed yet): `make setup` runs it when pyproject.toml, versions.yml or this file change.

    python3 spark-jobs/tools/venv.py .venv
    PYTHON3=/opt/python3.12/bin/python3 python3 spark-jobs/tools/venv.py .venv

The venv is made from the distribution's Python when there is one (base_python): Debian's
is built with PGO and LTO; a source build without --enable-optimizations (pyenv's
default, first on PATH on the reference machine) ran Ansible's tasks about 20% and
plain Python code 1.9x slower. Not when it is older than pyproject's requires-python:
then the python3 that runs this. PYTHON3 picks another (a new venv: remove .venv first).

It installs Debian's python3-venv when that interpreter lacks venv or ensurepip (with
sudo when not root), creates the venv when it has no python, then installs PyYAML at
its pin (pins.py needs it to read versions.yml) and every pin of `pins.py requirements`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pins

DISTRIBUTION_PYTHON = Path("/usr/bin/python3")
PIP = ["-m", "pip", "install", "-q", "--disable-pip-version-check"]


def say(text: str) -> None:
    print(f"    {text}", file=sys.stderr, flush=True)


def minimum_python() -> tuple[int, ...]:
    """pyproject's requires-python (">=3.11") as (3, 11)."""
    spec = pins.project()["requires-python"]
    if not spec.startswith(">="):
        raise SystemExit(f"pyproject.toml: requires-python {spec!r}: venv.py reads only '>=X.Y'")
    return tuple(int(part) for part in spec[2:].split("."))


def answers(python: Path | str, code: str) -> bool:
    return subprocess.run([str(python), "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode == 0


def base_python() -> str:
    """PYTHON3 when set, else the distribution's when recent enough, else this one."""
    chosen = os.environ.get("PYTHON3")
    if chosen:
        return chosen
    recent = f"import sys; sys.exit(sys.version_info < {minimum_python()})"
    if os.access(DISTRIBUTION_PYTHON, os.X_OK) and answers(DISTRIBUTION_PYTHON, recent):
        return str(DISTRIBUTION_PYTHON)
    return sys.executable


def ensure_venv_module(python: str) -> None:
    if not answers(python, "import ensurepip, venv"):
        say(f"{python} lacks venv or ensurepip (Debian's python3-venv): installing it with apt-get")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True)
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "python3-venv"], check=True,
                       stdout=subprocess.DEVNULL)


def main(venv_dir: Path) -> int:
    base = base_python()
    version = subprocess.run([base, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    print(f"==> Python virtualenv {venv_dir} ({base} {version})", file=sys.stderr)
    ensure_venv_module(base)
    python = venv_dir / "bin" / "python"
    if not os.access(python, os.X_OK):
        subprocess.run([base, "-m", "venv", str(venv_dir)], check=True)
    subprocess.run([python, *PIP, "--upgrade", "pip"], check=True)
    subprocess.run([python, *PIP, pins.bootstrap()], check=True, stdout=sys.stderr)
    requirements = subprocess.run([python, pins.__file__, "requirements"], check=True,
                                  capture_output=True, text=True).stdout
    (venv_dir / "requirements.txt").write_text(requirements)
    say(f"pip install {len(requirements.splitlines())} pinned packages "
        "(pyspark is a ~450 MB download the first time)")
    subprocess.run([python, *PIP, "--progress-bar", "off", "-r", str(venv_dir / "requirements.txt")],
                   check=True, stdout=sys.stderr)
    (venv_dir / ".installed").touch()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        sys.exit(main(Path(sys.argv[1])))
    except subprocess.CalledProcessError as e:
        sys.exit(f"make setup: {' '.join(map(str, e.cmd))} failed (exit {e.returncode})")

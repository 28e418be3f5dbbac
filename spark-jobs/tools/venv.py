"""The project's virtualenv, made with python3 alone (the standard library: nothing is
installed yet): `make setup` runs it when pyproject.toml, versions.yml or this file change.

    python3 spark-jobs/tools/venv.py .venv

It installs Debian's python3-venv when the interpreter lacks venv or ensurepip (with sudo
when not root), creates the venv when it has no python, then installs PyYAML at its pin
(pins.py needs it to read versions.yml) and every pin of `pins.py requirements`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pins

PIP = ["-m", "pip", "install", "-q", "--disable-pip-version-check"]


def say(text: str) -> None:
    print(f"    {text}", file=sys.stderr, flush=True)


def ensure_venv_module() -> None:
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        say("python3-venv is missing: installing it with apt-get")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True)
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "python3-venv"], check=True,
                       stdout=subprocess.DEVNULL)


def main(venv_dir: Path) -> int:
    print(f"==> Python virtualenv {venv_dir} ({sys.executable} {sys.version.split()[0]})", file=sys.stderr)
    ensure_venv_module()
    python = venv_dir / "bin" / "python"
    if not os.access(python, os.X_OK):
        subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True)
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

"""The tests are one tree: `pytest tests` collects every tier together, though the tiers
share test file names (pytest.ini's importlib import mode names each module by its path).
The tiers still run one at a time (`make test-<tier>`); this proves they can be mixed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import LOCAL_INVENTORY, ROOT, ansible_env

TIERS = sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py")))


@pytest.mark.slow
def test_every_tier_collects_in_one_run() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "tests" / "pytest.ini"), "--rootdir", str(ROOT),
         "--collect-only", "-q", f"--ansible-inventory={LOCAL_INVENTORY}", str(ROOT / "tests")],
        capture_output=True, text=True, timeout=600, env=ansible_env(), cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "import file mismatch" not in proc.stdout
    collected = {line.split("/")[1] for line in proc.stdout.splitlines() if line.startswith("tests/")}
    assert collected >= set(TIERS), f"tiers with no test collected: {set(TIERS) - collected}"

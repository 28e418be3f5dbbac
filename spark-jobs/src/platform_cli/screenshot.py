"""A screenshot of a local HTML page in headless Chromium (Debian's `chromium`, installed
by `make setup`): how `make dashboard` and its test check the static dashboard page as a
browser draws it, images included.

    python -m platform_cli.screenshot PAGE.html OUT.png [--width 1400] [--height 4000]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TIMEOUT = 120  # seconds: a cold Chromium start on a busy 2-core machine


class ScreenshotError(RuntimeError):
    """No Chromium, or it drew nothing; the message names the fix."""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise ScreenshotError("no chromium on PATH: run `make setup` (Debian package chromium)")


def take(page: Path, out: Path, width: int = 1400, height: int = 4000) -> Path:
    """Draw `page` at width x height CSS pixels into the PNG `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    # A profile of its own: no state shared with (or left for) anyone's browser.
    with tempfile.TemporaryDirectory(prefix="kp-chromium-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", f"--user-data-dir={profile}", f"--window-size={width},{height}",
               "--allow-file-access-from-files", f"--screenshot={out.resolve()}", page.resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if proc.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        raise ScreenshotError(f"chromium drew no screenshot of {page} (exit {proc.returncode}): "
                              f"{proc.stderr.strip()[-800:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m platform_cli.screenshot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("page", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--height", type=int, default=4000)
    a = p.parse_args(argv)
    if not a.page.is_file():
        p.error(f"no such page: {a.page}")
    try:
        print(f"screenshot: {take(a.page, a.out, a.width, a.height)}")
    except ScreenshotError as e:
        print(f"screenshot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`make up` when nothing changed: skip the playbook if its inputs are the ones of the
last successful run and every part of the cluster listens.

    python -m platform_cli.up_to_date check   # exit 0 (and say so) when up to date
    python -m platform_cli.up_to_date stamp   # after a successful site.yml run

site.yml is idempotent but runs some 400 tasks, about a minute even when each says
"ok". The inputs are everything the playbook reads from this checkout: the Ansible
tree (roles, playbooks, inventories, versions.yml, ansible.cfg), the catalogue, the
record schemas (catalogue/schemas: the playbook registers them in the schema
registry), and the inventory in use. What this cannot see is drift made by hand under .run/ while
the services still answer; `make up FORCE=1` runs the playbook regardless.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from kafka_patterns.config import inventory
from kafka_patterns.config.catalogue import ROOT

STAMP = ROOT / ".run" / "up.inputs"
SKIPPED_PARTS = {"__pycache__", ".pytest_cache"}


def input_files(inventory_dir: Path) -> list[Path]:
    # The declarations too: the catalogue, versions.yml, the record schemas (registered by role schema_registry).
    roots = [ROOT / "ansible", ROOT / "catalogue", inventory_dir]
    files: set[Path] = set()
    for root in roots:
        if root.is_file():
            files.add(root)
        elif root.is_dir():
            files.update(p for p in root.rglob("*")
                         if p.is_file() and not SKIPPED_PARTS & set(p.parts) and p.suffix != ".pyc")
    return sorted(files)


def digest(inventory_dir: Path) -> str:
    h = hashlib.sha256(str(inventory_dir.resolve()).encode())
    for path in input_files(inventory_dir):
        h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def not_listening() -> list[str]:
    cluster = inventory.load()
    return [f"{what} ({host}:{port})" for what, host, port in cluster.endpoints()
            if not inventory.listening(host, port)]


def check() -> int:
    """0 when up to date (says so), 1 with the reason the playbook must run."""
    if not STAMP.exists():
        return 1
    if STAMP.read_text().strip() != digest(inventory.inventory_path()):
        print("==> make up: the Ansible tree, the catalogue or the inventory changed since the last run",
              flush=True)
        return 1
    down = not_listening()
    if down:
        print(f"==> make up: not listening: {', '.join(down)}", flush=True)
        return 1
    since = time.strftime("%H:%M:%S", time.localtime(STAMP.stat().st_mtime))
    print(f"==> make up: nothing changed since the run of {since}: same inputs, and all "
          f"{len(inventory.load().endpoints())} endpoints answer (FORCE=1 runs the playbook anyway)")
    return 0


def stamp() -> int:
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(digest(inventory.inventory_path()) + "\n")
    return 0


def forget() -> int:
    STAMP.unlink(missing_ok=True)
    return 0


def main(argv: list[str]) -> int:
    commands = {"check": check, "stamp": stamp, "forget": forget}
    if argv[:1] and argv[0] in commands:
        return commands[argv[0]]()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

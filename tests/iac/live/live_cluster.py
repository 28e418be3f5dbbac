"""Access to the deployed platform for the live checks (fixtures in conftest.py)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Live:
    namespace: str
    cluster: str
    connect: str

    def get(self, *args: str) -> dict[str, Any]:
        """kubectl get ... -o json in the platform namespace."""
        proc = subprocess.run(["kubectl", "get", *args, "-n", self.namespace, "-o", "json"],
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def items(self, *args: str) -> list[dict[str, Any]]:
        return self.get(*args)["items"]


def condition(obj: dict[str, Any], kind: str = "Ready") -> str | None:
    return next((c["status"] for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), None)

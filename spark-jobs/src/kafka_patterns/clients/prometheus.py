"""The few Prometheus HTTP API reads the status view and the tests make (/api/v1)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

TIMEOUT = 10.0


class PrometheusError(RuntimeError):
    """Prometheus answered with an error (a refused query)."""


def api(url: str, path: str, **params) -> dict | list:
    """GET <url>/api/v1/<path>?<params>: its `data`. Raises OSError when it is away."""
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    with urllib.request.urlopen(f"{url}/api/v1/{path}{query}", timeout=TIMEOUT) as response:
        body = json.load(response)
    if body.get("status") != "success":
        raise PrometheusError(f"{path}: {body.get('error', body)}")
    return body["data"]


def instant(url: str, expr: str) -> float | None:
    """The first sample's value of an instant query, None when it returns nothing."""
    result = api(url, "query", query=expr)["result"]
    return float(result[0]["value"][1]) if result else None


def firing(url: str) -> list[dict]:
    """The alerts firing now (not the pending ones)."""
    return [a for a in api(url, "alerts")["alerts"] if a["state"] == "firing"]

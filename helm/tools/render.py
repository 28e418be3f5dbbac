"""Render helm/kafka-patterns for every values file into build/manifests/<name>/,
one YAML file per object: what the Kubernetes path applies, reviewable offline.

    python helm/tools/render.py [--namespace NS] [--out DIR]

The chart gets the same values files as on a cluster, in the same order
(kafka_patterns.config.chart_values): catalogue/versions.yml, catalogue/catalogue.yaml,
values-<name>.yaml. "default" is the chart's values.yaml alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from kafka_patterns.config import chart_values
from kafka_patterns.config.catalogue import ROOT
from kafka_patterns.config.chart_values import CHART_DIR

DEFAULT_OUT = ROOT / "build" / "manifests"
RELEASE = "patterns"
DEFAULT_NAMESPACE = "kafka-patterns"


class RenderError(RuntimeError):
    pass


def helm_binary() -> Path | None:
    """$HELM, else the pinned helm `make setup` installs (helm_tool role), else PATH."""
    for candidate in (os.environ.get("HELM"), ROOT / ".cache" / "bin" / "helm", shutil.which("helm")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


values_files = chart_values.variants


def helm_args(values: Path) -> list[str]:
    """-f files in helm's order (later wins); values.yaml itself is always read first."""
    return [arg for f in chart_values.value_files(values) for arg in ("-f", str(f))]


def render(values: Path, namespace: str = DEFAULT_NAMESPACE, helm: Path | None = None) -> list[dict[str, Any]]:
    helm = helm or helm_binary()
    if helm is None:
        raise RenderError("helm not found: run `make setup` (installs the pinned helm into .cache/bin) or set HELM")
    cmd = [str(helm), "template", RELEASE, str(CHART_DIR), "--namespace", namespace, *helm_args(values)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RenderError(f"helm template with {values.name} failed:\n{proc.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def file_name(index: int, obj: dict[str, Any]) -> str:
    return f"{index:03d}-{obj['kind'].lower()}-{obj['metadata']['name']}.yaml"


def write(objects: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    paths = []
    for i, obj in enumerate(objects):
        path = out_dir / file_name(i, obj)
        path.write_text(yaml.safe_dump(obj, sort_keys=False))
        paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        for name, values in values_files().items():
            out = args.out / name
            objects = render(values, args.namespace)
            paths = write(objects, out)
            kinds = Counter(o["kind"] for o in objects)
            where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
            print(f"{name}: {len(paths)} objects -> {where}/ ("
                  + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")")
    except RenderError as e:
        print(f"render: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

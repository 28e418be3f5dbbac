"""What `make image` built, as its last lines say: each image saved for the local cluster
(build/kube-images.json, written by role kube_images) with its size, whether the cluster
runs to load them, and the Docker way to build the project image alone.

    .venv/bin/python spark-jobs/tools/built_images.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import image_context
import pins

# Where role kube_images writes (its kube_images_manifest, kube_images_spark_context) and
# the local cluster's containerd listens (kube_images_containerd_socket).
MANIFEST = pins.ROOT / "build" / "kube-images.json"
CONTEXT = pins.ROOT / "build" / "image-context"
CONTAINERD_SOCKET = pins.ROOT / ".run" / "kube" / "containerd" / "containerd.sock"


def summary() -> list[str]:
    lines = [f"    {i['ref']}: {Path(i['tarball']).stat().st_size / 1e9:.2f} GB, {i['tarball']}"
             for i in json.loads(MANIFEST.read_text())]
    if not CONTAINERD_SOCKET.is_socket():
        lines.append("the local cluster is not running: images will be loaded by make kube-up/make deploy")
    docker = image_context.docker_build_command(CONTEXT)
    lines.append(f"(with Docker and a registry, the project image alone: {docker})")
    return lines


if __name__ == "__main__":
    try:
        print("\n".join(summary()))
    except pins.ToolError as e:
        sys.exit(str(e))

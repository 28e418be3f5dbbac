#!/usr/bin/python
"""Write a container image as a docker-archive tarball (what `docker save` writes):
manifest.json, one config JSON and one layer tar. `ctr images import`, `podman load`
and `docker load` read it. No image builder, daemon or registry is needed."""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import stat
import tarfile
import tempfile

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: docker_archive
short_description: Write a one-layer container image as a docker-archive tarball
description:
  - Packs a root filesystem directory, or a list of files, into one layer and writes
    it with an image config and a manifest as a docker-archive tarball, the format of
    C(docker save). C(ctr -n k8s.io images import), C(podman load) and C(docker load) read it.
  - The layer is reproducible (sorted entries; I(files) get mtime 0 and owner 0:0), so
    the same inputs give the same image id; the tarball is rewritten only when the
    image id or the name changes.
options:
  name:
    description: Image reference stored in the archive, e.g. C(registry.k8s.io/pause:3.10).
    required: true
    type: str
  dest:
    description: Path of the tarball to write.
    required: true
    type: path
  rootfs:
    description: A directory whose whole content becomes the layer (owners, modes, mtimes, links kept).
    type: path
  files:
    description: Files for the layer instead of I(rootfs), each C(src) (a file here), C(path) (in the image), C(mode).
    type: list
    elements: dict
  config:
    description: >-
      The image's runtime config, Docker keys: Entrypoint, Cmd, Env, WorkingDir, User,
      ExposedPorts, Labels.
    type: dict
    default: {}
  architecture:
    description: Image architecture; defaults to this machine's (amd64, arm64).
    type: str
"""

EXAMPLES = r"""
- name: The sandbox image from a static pause binary
  docker_archive:
    name: registry.k8s.io/pause:3.10
    dest: ~/.cache/kafka-patterns/images/pause-3.10.tar
    files:
      - {src: /tmp/pause, path: /pause, mode: "0755"}
    config: {Entrypoint: [/pause], User: "65535:65535"}
"""

RETURN = r"""
image_id:
  description: The config digest (what C(docker images) calls the image id).
  returned: always
  type: str
diff_id:
  description: Digest of the uncompressed layer.
  returned: always
  type: str
"""

ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}
EPOCH = "1970-01-01T00:00:00Z"


def _normalize_file(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def _drop_names(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uname = info.gname = ""
    return info


def write_layer(out, rootfs: str | None, files: list[dict]) -> None:
    """One layer tar into the open binary file `out`, entries in a stable order."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if rootfs:
            for top, dirs, names in os.walk(rootfs):
                dirs.sort()
                for name in sorted(dirs + names):
                    path = os.path.join(top, name)
                    arcname = os.path.relpath(path, rootfs)
                    if stat.S_ISSOCK(os.lstat(path).st_mode):
                        continue
                    tar.add(path, arcname=arcname, recursive=False, filter=_drop_names)
            return
        dirs_done: set[str] = set()
        for item in sorted(files, key=lambda f: f["path"]):
            path = item["path"].strip("/")
            parent = os.path.dirname(path)
            parts = parent.split("/") if parent else []
            for i in range(len(parts)):
                d = "/".join(parts[: i + 1])
                if d not in dirs_done:
                    dirs_done.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(_normalize_file(info))
            info = tar.gettarinfo(item["src"], arcname=path)
            if item.get("mode") is not None:
                info.mode = int(str(item["mode"]), 8)
            with open(item["src"], "rb") as f:
                tar.addfile(_normalize_file(info), f)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def existing_manifest(dest: str) -> list | None:
    try:
        with tarfile.open(dest) as tar:
            member = tar.extractfile("manifest.json")
            return json.load(member) if member else None
    except (OSError, KeyError, tarfile.TarError, ValueError):
        return None


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "dest": {"type": "path", "required": True},
            "rootfs": {"type": "path"},
            "files": {"type": "list", "elements": "dict"},
            "config": {"type": "dict", "default": {}},
            "architecture": {"type": "str"},
        },
        required_one_of=[("rootfs", "files")],
        mutually_exclusive=[("rootfs", "files")],
        supports_check_mode=True,
    )
    p = module.params
    if p["rootfs"] and not os.path.isdir(p["rootfs"]):
        module.fail_json(msg=f"rootfs {p['rootfs']} is not a directory")
    for item in p["files"] or []:
        if not {"src", "path"} <= item.keys():
            module.fail_json(msg=f"each entry of files needs src and path: {item}")
        if not os.path.isfile(item["src"]):
            module.fail_json(msg=f"{item['src']} (for {item['path']} in {p['name']}) does not exist")
    dest_dir = os.path.dirname(os.path.abspath(p["dest"])) or "."
    os.makedirs(dest_dir, exist_ok=True)

    fd, layer_path = tempfile.mkstemp(prefix=".layer-", suffix=".tar", dir=dest_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            write_layer(out, p["rootfs"], p["files"] or [])
        diff_id = sha256_file(layer_path)
        config = {
            "architecture": p["architecture"] or ARCH.get(platform.machine(), platform.machine()),
            "os": "linux",
            "created": EPOCH,
            "config": p["config"],
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
            "history": [{"created": EPOCH, "created_by": "kafka-patterns docker_archive"}],
        }
        config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        config_id = hashlib.sha256(config_bytes).hexdigest()
        manifest = [{"Config": f"{config_id}.json", "RepoTags": [p["name"]], "Layers": [f"{diff_id}/layer.tar"]}]
        result = {"image_id": f"sha256:{config_id}", "diff_id": f"sha256:{diff_id}", "dest": p["dest"]}
        if existing_manifest(p["dest"]) == manifest:
            module.exit_json(changed=False, **result)
        if module.check_mode:
            module.exit_json(changed=True, **result)
        fd, tmp_dest = tempfile.mkstemp(prefix=".image-", suffix=".tar", dir=dest_dir)
        try:
            with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w") as tar:
                add_bytes(tar, f"{config_id}.json", config_bytes)
                tar.add(layer_path, arcname=f"{diff_id}/layer.tar", filter=_normalize_file)
                add_bytes(tar, "manifest.json", json.dumps(manifest).encode())
            os.chmod(tmp_dest, 0o644)
            os.replace(tmp_dest, p["dest"])
        except BaseException:
            os.unlink(tmp_dest)
            raise
        module.exit_json(changed=True, **result)
    finally:
        if os.path.exists(layer_path):
            os.unlink(layer_path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Remove what the local Kubernetes left in iptables/ip6tables after `kube-proxy --cleanup`:
every KUBE-* chain (the kubelet's canary and hint chains, anything kube-proxy kept) and
the CNI bridge plugin's masquerade chains of our network (rules commented with
`name: "<network>"`), with every rule that jumps to them.
Usage: iptables_cleanup.py <cni network name>. Prints `changed` when it removed anything."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

TABLES = ("filter", "nat", "mangle", "raw")


def save(cmd: str, table: str) -> list[str]:
    proc = subprocess.run([f"{cmd}-save", "-t", table], capture_output=True, text=True)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def cleanup(cmd: str, network: str) -> bool:
    changed = False
    ours_comment = f'name: \\"{network}\\"'
    for table in TABLES:
        lines = save(cmd, table)
        chains = {line[1:].split()[0] for line in lines if line.startswith(":")}
        rules = [line for line in lines if line.startswith("-A ")]
        ours = {c for c in chains if c.startswith("KUBE-")}
        # The bridge plugin's per-pod chains: jumped to by a rule carrying our network's name.
        for rule in rules:
            if ours_comment in rule or f'name: "{network}"' in rule:
                m = re.search(r"-j (CNI-\S+)", rule)
                if m:
                    ours.add(m.group(1))
        if not ours:
            continue
        for rule in rules:
            parts = shlex.split(rule)
            chain = parts[1]
            target = parts[parts.index("-j") + 1] if "-j" in parts else None
            if chain not in ours and target in ours:
                subprocess.run([cmd, "-w", "-t", table, "-D", chain, *parts[2:]], check=False)
        for chain in sorted(ours & chains):
            subprocess.run([cmd, "-w", "-t", table, "-F", chain], check=False)
        for chain in sorted(ours & chains):
            subprocess.run([cmd, "-w", "-t", table, "-X", chain], check=False)
        changed = True
    return changed


def main() -> int:
    network = sys.argv[1]
    changed = False
    for cmd in ("iptables", "ip6tables"):
        if shutil.which(cmd) and shutil.which(f"{cmd}-save"):
            changed |= cleanup(cmd, network)
    if changed:
        print("changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

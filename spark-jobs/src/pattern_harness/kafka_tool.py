"""Run Kafka's own command-line tools (the JVM classes) from the local distribution."""

from __future__ import annotations

import re
import subprocess

from kafka_patterns.config import credentials
from kafka_patterns.config.catalogue import ROOT, versions


def kafka_tool_path() -> str:
    return str(ROOT / ".cache" / f"kafka-{versions()['kafka_version']}" / "bin" / "kafka-tool")


def run(main_class: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kafka_tool_path(), main_class, *args], capture_output=True, text=True, timeout=timeout)


def quorum(bootstrap: str, user: str = "admin") -> dict[str, object]:
    """LeaderId, voters and per-node replication state from MetadataQuorumCommand, asked
    as `user`: it needs Describe on the cluster, which only the admin holds (it would also
    list the SCRAM users and the ACLs). For tests and fault tools; make status reads the
    raft metrics instead."""
    config = str(credentials.java_properties(user))
    status = run("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", bootstrap,
                 "--command-config", config, "describe", "--status")
    if status.returncode != 0:
        raise RuntimeError(f"MetadataQuorumCommand failed: {status.stderr.strip() or status.stdout.strip()}")
    fields = dict(line.split(":", 1) for line in status.stdout.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    replication = run("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", bootstrap,
                      "--command-config", config, "describe", "--replication")
    rows = [line.split() for line in replication.stdout.splitlines()[1:] if line.strip()]
    return {"leader": int(fields.get("LeaderId", -1)), "epoch": fields.get("LeaderEpoch", "?"),
            "high_watermark": fields.get("HighWatermark", "?"), "voters_raw": fields.get("CurrentVoters", ""),
            "replication": rows}


def features(bootstrap: str, user: str = "admin") -> dict[str, dict[str, str]]:
    """The cluster's feature levels (FeatureCommand describe): per feature, e.g.
    metadata.version, its supported_max (the newest every node supports) and finalized
    level. A level this tool's Kafka cannot name reads "UNKNOWN 33"."""
    out = run("org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", bootstrap,
              "--command-config", str(credentials.java_properties(user)), "describe")
    if out.returncode != 0:
        raise RuntimeError(f"FeatureCommand failed: {out.stderr.strip() or out.stdout.strip()}")
    found = {}
    for line in out.stdout.splitlines():
        fields = re.findall(r"(\w+): (UNKNOWN \d+|\S+)", line)
        if fields and fields[0][0] == "Feature":
            values = dict(fields[1:])
            found[fields[0][1]] = {"supported_max": values.get("SupportedMaxVersion", "?"),
                                   "finalized": values.get("FinalizedVersionLevel", "?")}
    return found

"""What a stack on this machine needs made before `pulumi up`, as JSON for the deploy
(ansible/roles/k8s_local): the operators' chart directories its config points at, and
the directories of its hostPath volumes with their owners.

    cd pulumi && python -m kp_infra.host_side local
"""

from __future__ import annotations

import dataclasses
import json
import sys

import pulumi
from kp_infra import settings as settings_mod
from kp_infra.volumes import host_volumes


def plan(stack: str) -> dict:
    settings = settings_mod.load(settings_mod.StackFile(stack), with_secrets=False)
    return {
        "strimzi_chart": str(settings.strimzi_chart_dir or ""),
        "spark_operator_chart": str(settings.spark_operator_chart_dir or ""),
        "volumes": [dataclasses.asdict(v) | {"name": v.name} for v in host_volumes(settings)],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(json.dumps(plan(argv[0])))
    except pulumi.RunError as missing:
        print(missing, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

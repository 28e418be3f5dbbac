"""hostPath PersistentVolumes for the claims of our releases, on a cluster without a
volume provisioner (the local Kubernetes): the Spark checkpoints' claim of each release
and, in Strimzi mode, the claim Strimzi makes for each Kafka node's JBOD volume 0. Each
volume is reserved for its claim (claimRef) and keeps its data when the claim, the
release or the stack goes (Retain; `make clean` removes the directories).

The directories must exist, owned by the pods' user, before the pods start: the deploy
makes them from this module's list (kp_infra.host_side prints it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi_kubernetes as k8s

import pulumi
from kafka_patterns.config import names
from kp_infra import settings as settings_mod

LABELS = {"app.kubernetes.io/part-of": "kafka-patterns", "kafka-patterns/volume": "hostpath"}
# UID of the Spark image's user (spark-jobs/Dockerfile USER 185) and of Strimzi's Kafka
# image (1001, group 0): the owners of their directories.
SPARK_UID = 185
KAFKA_UID = 1001


@dataclass(frozen=True)
class HostVolume:
    namespace: str
    claim: str
    path: str
    size: str
    storage_class: str
    access_modes: tuple[str, ...]
    owner: int
    group: int
    mode: str

    @property
    def name(self) -> str:
        return f"{self.namespace}-{self.claim}"


def kafka_claims(values: dict[str, Any]) -> list[str]:
    """The claims Strimzi makes for the nodes' JBOD volume 0, data-0-<cluster>-<pool>-<id>,
    node ids counted from 0 over the pools in the order the chart declares them."""
    kafka, prefix = values["kafka"], f"data-0-{names.cluster_name(values)}-"
    brokers = int(kafka["brokers"]["replicas"])
    if kafka["nodePools"] == "combined":
        return [f"{prefix}dual-role-{i}" for i in range(brokers)]
    controllers = int(kafka["controllers"]["replicas"])
    return ([f"{prefix}controller-{i}" for i in range(controllers)]
            + [f"{prefix}broker-{i}" for i in range(controllers, controllers + brokers)])


def host_volumes(settings: settings_mod.Settings) -> list[HostVolume]:
    """Every volume of the stack's releases; none when the cluster provisions its own."""
    if settings.volumes_dir is None:
        return []
    out = []
    for release in settings.releases:
        values = settings.release_effective_values(release)
        base = settings.volumes_dir / release.namespace
        checkpoint = values["spark"]["checkpoint"]
        if values["spark"].get("enabled", True) and checkpoint["claimName"]:
            out.append(HostVolume(release.namespace, checkpoint["claimName"], str(base / checkpoint["claimName"]),
                                  checkpoint["size"], checkpoint["storageClass"], ("ReadWriteMany", "ReadWriteOnce"),
                                  SPARK_UID, SPARK_UID, "0775"))
        if not values["kafka"]["external"]["enabled"]:
            storage = values["kafka"]["brokers"]["storage"]
            out += [HostVolume(release.namespace, claim, str(base / claim), storage["size"], storage["class"],
                               ("ReadWriteOnce",), KAFKA_UID, 0, "0770") for claim in kafka_claims(values)]
    return out


class HostPathVolumes(pulumi.ComponentResource):
    def __init__(self, name: str, volumes: list[HostVolume], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kafka-patterns:index:HostPathVolumes", name, None, opts)
        # Kept by `make destroy`: a volume (and its claim) outlives the stack with its data.
        kept = pulumi.ResourceOptions(parent=self, retain_on_delete=True)
        self.classes = [k8s.storage.v1.StorageClass(
            f"{name}-class-{cls}", metadata={"name": cls, "labels": LABELS},
            provisioner="kubernetes.io/no-provisioner", reclaim_policy="Retain", volume_binding_mode="Immediate",
            opts=kept) for cls in sorted({v.storage_class for v in volumes})]
        after_classes = pulumi.ResourceOptions(parent=self, retain_on_delete=True, depends_on=self.classes)
        self.volumes = [k8s.core.v1.PersistentVolume(
            f"{name}-{v.name}",
            metadata={"name": v.name, "labels": LABELS},
            spec={"storageClassName": v.storage_class, "capacity": {"storage": v.size},
                  "accessModes": list(v.access_modes), "persistentVolumeReclaimPolicy": "Retain",
                  "claimRef": {"namespace": v.namespace, "name": v.claim},
                  "hostPath": {"path": v.path, "type": "Directory"}},
            opts=after_classes) for v in volumes]
        self.register_outputs({"volumes": [v.name for v in volumes]})


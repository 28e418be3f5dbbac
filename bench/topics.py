"""The benchmark's own topics (prefix bench.): created per cell with the admin client,
deleted at the end. Catalogue topics are never touched."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic

from kafka_patterns.clients import kafka

PREFIX = "bench."


def name(run: str, index: int, partitions: int, rf: int) -> str:
    return f"{PREFIX}{run}.{index}.p{partitions}.rf{rf}"


def create(topic: str, partitions: int, rf: int, admin: AdminClient | None = None) -> None:
    """On the local cluster as the bench user, or through `admin` (another cluster)."""
    if not topic.startswith(PREFIX):
        raise ValueError(f"{topic!r}: the benchmark only creates {PREFIX}* topics")
    admin = kafka.admin() if admin is None else admin
    config = {"min.insync.replicas": "2" if rf >= 3 else "1"}
    for future in admin.create_topics([NewTopic(topic, partitions, rf, config=config)]).values():
        future.result(timeout=30)
    # Until every partition has a leader a producer would wait on metadata inside the timing.
    kafka.wait_until(lambda: _ready(admin, topic, partitions), timeout=30, interval=0.2,
                       what=f"leaders of {topic}")


def _ready(admin, topic: str, partitions: int) -> bool:
    meta = admin.list_topics(topic, timeout=10).topics.get(topic)
    return bool(meta and not meta.error and len(meta.partitions) == partitions
                and all(p.leader >= 0 for p in meta.partitions.values()))


def delete(topics: list[str], admin: AdminClient | None = None) -> None:
    ours = [t for t in topics if t.startswith(PREFIX)]
    if not ours:
        return
    # Kept referenced until the futures are done (else: "handle destroyed").
    admin = kafka.admin() if admin is None else admin
    for future in admin.delete_topics(ours, operation_timeout=30).values():
        try:
            future.result(timeout=60)
        except Exception as e:
            print(f"    could not delete a bench topic: {e}", flush=True)


def leftovers(run: str | None = None) -> list[str]:
    """bench.* topics on the cluster (of one run, or of any earlier interrupted run)."""
    prefix = f"{PREFIX}{run}." if run else PREFIX
    return sorted(t for t in kafka.admin().list_topics(timeout=10).topics if t.startswith(prefix))

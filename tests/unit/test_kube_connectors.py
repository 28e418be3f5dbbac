"""kube.connectors reads Strimzi's view of the KafkaConnectors: a connector counts as
running only when Connect reports it and every one of its tasks RUNNING."""

from __future__ import annotations

from pattern_harness import kube_jobs


class FakeCustomObjects:
    def __init__(self, items: list[dict]):
        self.items, self.asked = items, []

    def list_namespaced_custom_object(self, group, version, namespace, plural):
        self.asked.append((group, version, namespace, plural))
        return {"items": self.items}


def connector(name: str, config: dict, status: dict | None = None) -> dict:
    return {"metadata": {"name": name}, "spec": {"config": config}, **({"status": status} if status else {})}


def connect_status(state: str, *tasks: str) -> dict:
    return {"connectorStatus": {"connector": {"state": state}, "tasks": [{"id": i, "state": t}
                                                                        for i, t in enumerate(tasks)]}}


def test_connectors_are_read_from_the_namespace_with_their_states_and_config():
    api = FakeCustomObjects([
        connector("stations-source", {"slot.name": "s"}, connect_status("RUNNING", "RUNNING")),
        connector("stations-sink", {"table.name.format": "t"}, connect_status("RUNNING", "FAILED")),
        connector("new-one", {}),
    ])
    found = kube_jobs.connectors(kube_jobs.Cluster("ns", api, None, None, None))
    assert api.asked == [("kafka.strimzi.io", "v1", "ns", "kafkaconnectors")]
    assert found["stations-source"].running and found["stations-source"].config == {"slot.name": "s"}
    # A failed task, or no report yet, is not running.
    assert not found["stations-sink"].running and found["stations-sink"].task_states == ("FAILED",)
    assert not found["new-one"].running and found["new-one"].state == ""


def test_a_connector_without_tasks_is_not_running():
    api = FakeCustomObjects([connector("c", {}, connect_status("RUNNING"))])
    assert not kube_jobs.connectors(kube_jobs.Cluster("ns", api, None, None, None))["c"].running

"""Each KRaft node, as a host: its process, its ports, its config and its data dir."""

from __future__ import annotations

import testinfra

from helpers import parse_properties

testinfra_hosts = ["ansible://kafka_brokers"]


def kafka_process(host, name: str):
    procs = [p for p in host.process.filter(comm="java")
             if "kafka.Kafka" in p.args and f"/{name}/server.properties" in p.args]
    assert len(procs) == 1, f"expected one kafka.Kafka process for {name}, found {len(procs)}"
    return procs[0]


def server_properties(host, name: str) -> dict[str, str]:
    path = kafka_process(host, name).args.split()[-1]
    return parse_properties(host.file(path).content_string)


def test_the_node_runs_one_kafka_process(host, hostvars):
    proc = kafka_process(host, hostvars["inventory_hostname"])
    assert proc.user == host.user().name


def test_the_node_listens_on_its_broker_and_controller_ports(host, hostvars):
    for port in (hostvars["kafka_broker_port"], hostvars["kafka_controller_port"]):
        assert host.socket(f"tcp://127.0.0.1:{port}").is_listening, port


def test_server_properties_carry_the_guarantee_settings(host, hostvars, cat):
    props = server_properties(host, hostvars["inventory_hostname"])
    rf, min_isr = str(cat["cluster"]["replicationFactor"]), str(cat["cluster"]["minInsyncReplicas"])
    assert props["node.id"] == str(hostvars["kafka_node_id"])
    assert props["broker.rack"] == hostvars["kafka_rack"]
    assert set(props["process.roles"].split(",")) == {"broker", "controller"}
    assert props["default.replication.factor"] == rf
    assert props["min.insync.replicas"] == min_isr
    assert props["unclean.leader.election.enable"] == "false"
    for internal in ("offsets.topic", "transaction.state.log", "share.coordinator.state.topic"):
        assert props[f"{internal}.replication.factor"] == rf, internal
    for internal in ("transaction.state.log", "share.coordinator.state.topic"):
        assert props[f"{internal}.min.isr"] == min_isr, internal
    voters = props["controller.quorum.voters"].split(",")
    assert len(voters) == 3


def test_all_data_dirs_are_formatted_with_one_cluster_id(request):
    hosts = testinfra.get_hosts(["ansible://kafka_brokers"],
                                ansible_inventory=request.config.getoption("ansible_inventory"))
    cluster_ids = {}
    for h in hosts:
        name = h.ansible.get_variables()["inventory_hostname"]
        for log_dir in server_properties(h, name)["log.dirs"].split(","):
            meta = parse_properties(h.file(f"{log_dir}/meta.properties").content_string)
            assert meta["node.id"] == str(h.ansible.get_variables()["kafka_node_id"])
            cluster_ids[name] = meta["cluster.id"]
    assert len(cluster_ids) == 3
    assert len(set(cluster_ids.values())) == 1, cluster_ids

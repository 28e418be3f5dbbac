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


def test_the_node_listens_on_its_client_replication_and_controller_ports(host, hostvars):
    for port in (hostvars["kafka_broker_port"], hostvars["kafka_replication_port"], hostvars["kafka_controller_port"]):
        assert host.socket(f"tcp://127.0.0.1:{port}").is_listening, port


def test_every_listener_is_encrypted_and_authenticated(host, hostvars):
    props = server_properties(host, hostvars["inventory_hostname"])
    protocols = dict(entry.split(":") for entry in props["listener.security.protocol.map"].split(","))
    assert set(protocols.values()) <= {"SSL", "SASL_SSL"}, protocols
    used = {listener.split("://")[0] for listener in props["listeners"].split(",")}
    assert used <= set(protocols), used
    # Mutual TLS between nodes; SCRAM-SHA-512 for every client listener.
    for name, protocol in protocols.items():
        if protocol == "SSL":
            assert props[f"listener.name.{name.lower()}.ssl.client.auth"] == "required", name
        else:
            assert props[f"listener.name.{name.lower()}.sasl.enabled.mechanisms"] == "SCRAM-SHA-512", name
    assert props["inter.broker.listener.name"] == "REPLICATION"
    assert protocols[props["controller.listener.names"]] == "SSL"


def test_only_the_admin_and_the_nodes_are_super_users(host, hostvars):
    props = server_properties(host, hostvars["inventory_hostname"])
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["allow.everyone.if.no.acl.found"] == "false"
    supers = props["super.users"].split(";")
    assert "User:admin" in supers and "User:ANONYMOUS" not in supers
    assert all(s == "User:admin" or s.startswith("User:CN=") for s in supers), supers


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


# What the alerting rules (catalogue/metrics/alerts.yml) read from every node.
ALERTED_METRICS = ["kafka_server_replicamanager_underreplicatedpartitions",
                   "kafka_controller_kafkacontroller_offlinepartitionscount",
                   "kafka_controller_kafkacontroller_activecontrollercount",
                   "kafka_cluster_partition_underminisr"]


def test_the_node_serves_the_metrics_its_alerts_read(host, hostvars):
    """The JMX exporter agent, with Strimzi's rules, on kafka_metrics_host:kafka_metrics_port."""
    # Role defaults are not inventory variables: the same defaults as role kafka_node.
    address = hostvars.get("kafka_metrics_host") or hostvars.get("kafka_advertised_host", "127.0.0.1")
    url = f"http://{address}:{hostvars.get('kafka_metrics_port', 9404)}/metrics"
    body = host.check_output(f"curl -sf --max-time 10 {url}")
    names = {line.split("{")[0].split(" ")[0] for line in body.splitlines() if not line.startswith("#")}
    assert set(ALERTED_METRICS) <= names, f"missing from {url}: {sorted(set(ALERTED_METRICS) - names)}"
    assert "kafka_server_brokertopicmetrics_messagesin_total" in names, "Strimzi's dashboard names"

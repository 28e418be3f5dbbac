"""The Connect worker, as a host: its process, its REST port, its plugin path."""

from helpers import parse_properties

testinfra_hosts = ["ansible://kafka_connect"]


def worker(host):
    procs = [p for p in host.process.filter(comm="java") if "ConnectDistributed" in p.args]
    assert len(procs) == 1, f"expected one Connect worker, found {len(procs)}"
    return procs[0]


def test_the_worker_runs_and_listens(host, hostvars):
    worker(host)
    assert host.socket(f"tcp://127.0.0.1:{hostvars['connect_rest_port']}").is_listening


def test_the_worker_keeps_its_state_in_replicated_topics_and_has_the_plugins(host, cat):
    props = parse_properties(host.file(worker(host).args.split()[-1]).content_string)
    for store in ("config", "offset", "status"):
        assert props[f"{store}.storage.replication.factor"] == str(cat["cluster"]["replicationFactor"])
    plugins = host.file(props["plugin.path"])
    assert plugins.is_directory
    assert {"connect-file", "debezium-connector-postgres", "debezium-connector-jdbc"} <= set(plugins.listdir())

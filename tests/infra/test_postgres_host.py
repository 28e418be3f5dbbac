"""PostgreSQL, as a host: the server process and its port."""

testinfra_hosts = ["ansible://postgresql"]


def test_postgres_runs_and_listens(host, hostvars):
    assert host.process.filter(user="postgres", comm="postgres"), "no postgres process"
    assert host.socket(f"tcp://127.0.0.1:{hostvars['postgresql_port']}").is_listening

"""A failing test prints its fixtures: the cluster fixture's repr must not hold a password."""

from pathlib import Path

from kafka_patterns.inventory import Cluster


def test_the_cluster_repr_shows_no_password():
    cluster = Cluster(nodes=(), connect_urls=(), postgres_host="127.0.0.1", postgres_port=15432, postgres_db="db",
                      postgres_user="app", postgres_password="app-secret", run_dir=Path("/tmp"),
                      postgres_replication_password="cdc-secret")
    assert "secret" not in repr(cluster)
    assert "password=app-secret" in cluster.postgres_dsn  # still there for the connection itself

"""Kafka messaging patterns as PySpark and client jobs, shipped in the Spark image:
config (the catalogue and what a process reads), clients (of Kafka, Connect, the
registry, PostgreSQL, Prometheus), runtime (what every job runs on), jobs (the
patterns), monitoring (canary, lag exporter, dashboards). The layers only import
downwards in that order; tests/unit/test_package_layers.py checks it."""

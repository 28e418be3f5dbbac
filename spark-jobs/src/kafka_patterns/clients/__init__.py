"""Clients of the platform's services with its guarantee and security defaults: Kafka
(confluent-kafka), the Connect REST API, the schema registry, PostgreSQL and
Prometheus' HTTP API. Built on config only."""

"""Kafka messaging patterns: the catalogue, the platform tooling and the PySpark jobs."""

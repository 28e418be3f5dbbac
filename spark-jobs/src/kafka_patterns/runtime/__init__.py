"""What a running job needs around its own logic: the Spark session and its Kafka
reads and writes, the reading contract, dead letters, schema checks and tags, lookup
tables, the streaming metrics it serves and the fault hooks the harness triggers."""

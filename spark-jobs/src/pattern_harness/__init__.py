"""The test harness: runs a pattern's jobs (as local processes or as the deployed
Kubernetes applications), feeds them generated readings, judges the delivery (lost,
duplicated, reordered) and injects faults. Never shipped in the Spark image: it uses
kafka_patterns, never the other way round."""

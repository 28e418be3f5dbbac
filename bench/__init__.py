"""`make bench`: throughput and latency of the local cluster, each figure next to its
baseline measured in the same run (Kafka's own perf tools), reported as ratios.

    python -m bench [--quick]        (from the repository root; QUICK=1 with make)

Modules, one job each: grid (what is measured), topics (bench.* topics), java_perf
(ProducerPerformance/ConsumerPerformance), python_perf (confluent-kafka producer and
consumer), spark_perf (Spark Kafka batch source), pipeline (Spark jobs end to end),
stats (pure arithmetic), report (JSON, Markdown, table), plots (PNGs).
"""

"""The code behind the make targets: demo, run, status, dlq, bad-input, client-config,
the quiet steps of long targets and the up-to-date check of make up. Uses
kafka_patterns and pattern_harness; nothing imports it."""

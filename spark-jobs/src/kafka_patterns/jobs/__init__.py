"""One module per pattern job (catalogue `module:`). Each has pure transformation
functions (unit-tested on in-memory DataFrames or plain records) and a `main(argv)`
that wires them to Kafka and the sinks; run as `python -m kafka_patterns.jobs.<name>`."""

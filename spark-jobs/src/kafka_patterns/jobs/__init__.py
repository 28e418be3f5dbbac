"""The modules that run the catalogue's jobs (catalogue `module:`; one module may run
several jobs, told apart by their catalogue `args`). Each has pure transformation
functions (unit-tested on in-memory DataFrames or plain records) and a `main(argv)`
that looks its job up (base.job_spec: --job NAME, else $KAFKA_PATTERNS_JOB) and wires
it to Kafka and the sinks; run as `python -m kafka_patterns.jobs.<module> --job NAME`."""

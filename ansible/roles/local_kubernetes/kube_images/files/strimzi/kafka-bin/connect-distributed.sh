#!/usr/bin/env bash
# connect-distributed.sh <worker.properties>: a Connect worker (Strimzi's kafka_connect_run.sh).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: connect-distributed.sh <worker.properties>" >&2
  exit 2
fi
: "${KAFKA_HEAP_OPTS:=-Xms256M -Xmx2G}"
export KAFKA_HEAP_OPTS
exec "$(dirname "$0")/kafka-run-class.sh" -name connectDistributed org.apache.kafka.connect.cli.ConnectDistributed "$@"

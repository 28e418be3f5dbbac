#!/usr/bin/env bash
# kafka-server-start.sh <server.properties>: a KRaft node (Strimzi's kafka_run.sh).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: kafka-server-start.sh <server.properties> [--override property=value]..." >&2
  exit 2
fi
: "${KAFKA_HEAP_OPTS:=-Xmx1G -Xms1G}"
export KAFKA_HEAP_OPTS
exec "$(dirname "$0")/kafka-run-class.sh" -name kafkaServer -loggc kafka.Kafka "$@"

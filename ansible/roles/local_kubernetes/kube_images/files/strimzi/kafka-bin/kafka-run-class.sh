#!/usr/bin/env bash
# kafka-run-class.sh [-daemon] [-name <name>] [-loggc] <class> [args]: start a Kafka
# class on the jars of libs/, the launcher Strimzi's run scripts (kafka_run.sh,
# kafka_connect_run.sh) call through kafka-server-start.sh, kafka-storage.sh and
# connect-distributed.sh. Apache's tarball, where the original lives, cannot be had
# here; this honours the same environment: KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS (unset: log4j2's default, errors
# only, to the console), KAFKA_OPTS, JAVA_HOME.
# Unlike Apache's, it opens no remote JMX port unless KAFKA_JMX_OPTS asks for one
# (Strimzi sets it when the Kafka CR enables JMX, with authentication).
set -euo pipefail
base_dir=$(cd "$(dirname "$0")/.." && pwd)

while [ $# -gt 0 ]; do
  case $1 in
    -name) shift 2 ;;           # a process name for daemon logs: nothing is daemonised
    -loggc) shift ;;            # GC logging comes from KAFKA_GC_LOG_OPTS alone
    -daemon) echo "kafka-run-class.sh: -daemon is not supported in the container image" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "usage: kafka-run-class.sh [-name <name>] [-loggc] <class> [args]" >&2
  exit 2
fi

java=${JAVA_HOME:+$JAVA_HOME/bin/}java
: "${KAFKA_HEAP_OPTS:=-Xmx256M}"
: "${KAFKA_JVM_PERFORMANCE_OPTS:=-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"

# shellcheck disable=SC2086  # the *_OPTS are lists of JVM arguments
exec "$java" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_GC_LOG_OPTS:-} ${KAFKA_JMX_OPTS:-} \
  ${KAFKA_LOG4J_OPTS:-} -cp "$base_dir/libs/*" ${KAFKA_OPTS:-} "$@"

#!/bin/bash
# Executor decommissioning hook (spark.kubernetes.decommission.script, default
# /opt/decom.sh), run by the pod's preStop handler when spark.decommission.enabled:
# ask the executor JVM to decommission (SIGPWR) and block until it has exited, so that
# Kubernetes does not kill it while it migrates its blocks.
set -u
pid=$(pgrep -n -f 'org\.apache\.spark\.scheduler\.cluster\.k8s\.KubernetesExecutorBackend' || true)
if [ -z "$pid" ]; then
  echo "decom: no executor process found" >&2
  exit 0
fi
echo "decom: asking executor pid $pid to decommission ($(date -u +%FT%TZ))"
kill -s PWR "$pid"
tail --pid="$pid" -f /dev/null
echo "decom: executor pid $pid exited ($(date -u +%FT%TZ))"

#!/bin/bash
# Entry point of the spark-operator image (spark-operator.Dockerfile), as upstream's:
# give an arbitrary container UID a passwd entry (nss_wrapper), then run the operator
# under tini with the container's arguments (e.g. `controller start ...`,
# `webhook start ...`, `version`).
set -eo pipefail

uid=$(id -u)
if ! getent passwd "$uid" >/dev/null 2>&1; then
  for wrapper in /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so /lib/*/libnss_wrapper.so; do
    [ -s "$wrapper" ] || continue
    NSS_WRAPPER_PASSWD=$(mktemp)
    NSS_WRAPPER_GROUP=$(mktemp)
    printf 'spark:x:%s:%s:%s:%s:/bin/false\n' "$uid" "$(id -g)" "${SPARK_USER_NAME:-anonymous uid}" "${SPARK_HOME:-/opt/spark}" >"$NSS_WRAPPER_PASSWD"
    printf 'spark:x:%s:\n' "$(id -g)" >"$NSS_WRAPPER_GROUP"
    export LD_PRELOAD="$wrapper" NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
    break
  done
fi

exec /usr/bin/tini -s -- /usr/bin/spark-operator "$@"

#!/bin/bash
# Entry point of the project's Spark base image (spark-base.Dockerfile): the same
# contract as the official apache/spark image's /opt/entrypoint.sh, written for this
# project. Spark on Kubernetes starts its pods with one of two first arguments:
#
#   driver [spark-submit args...]
#       spark-submit in client mode inside the driver pod, bound to the pod's address
#       (SPARK_DRIVER_BIND_ADDRESS, set by Spark from status.podIP).
#   executor
#       the KubernetesExecutorBackend JVM, configured entirely by environment
#       variables that Spark sets on the executor pod: SPARK_DRIVER_URL,
#       SPARK_EXECUTOR_ID, SPARK_EXECUTOR_CORES, SPARK_EXECUTOR_MEMORY,
#       SPARK_APPLICATION_ID, SPARK_EXECUTOR_POD_IP, SPARK_EXECUTOR_POD_NAME,
#       SPARK_RESOURCE_PROFILE_ID, SPARK_JAVA_OPT_<n> (one JVM option each, in the
#       order of n) and optionally SPARK_CLASSPATH / SPARK_EXTRA_CLASSPATH /
#       SPARK_DIST_CLASSPATH / SPARK_CONF_DIR / HADOOP_CONF_DIR.
#
# Anything else is executed as given (a shell, spark-submit --version, a test).
# Driver and executor run under tini (zombies reaped, signals forwarded); a container
# started as root drops to the spark user first.
set -eo pipefail

SPARK_HOME=${SPARK_HOME:-/opt/spark}
export SPARK_HOME
if [ -z "${JAVA_HOME:-}" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
fi
export JAVA_HOME

# A container run with an arbitrary UID (OpenShift, runAsUser) has no passwd entry;
# the JVM and Hadoop's UserGroupInformation want a user name. nss_wrapper provides one
# without making /etc/passwd writable.
fake_passwd_entry() {
  local uid gid wrapper
  uid=$(id -u)
  getent passwd "$uid" >/dev/null 2>&1 && return 0
  gid=$(id -g)
  for wrapper in /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so /lib/*/libnss_wrapper.so; do
    [ -s "$wrapper" ] || continue
    NSS_WRAPPER_PASSWD=$(mktemp)
    NSS_WRAPPER_GROUP=$(mktemp)
    printf 'spark:x:%s:%s:%s:%s:/bin/false\n' "$uid" "$gid" "${SPARK_USER_NAME:-anonymous uid}" "$SPARK_HOME" >"$NSS_WRAPPER_PASSWD"
    printf 'spark:x:%s:\n' "$gid" >"$NSS_WRAPPER_GROUP"
    export LD_PRELOAD="$wrapper" NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
    return 0
  done
  echo "entrypoint: uid $uid has no passwd entry and libnss_wrapper is missing" >&2
}

# Run the command under tini, as the spark user when the container runs as root.
run() {
  fake_passwd_entry
  if [ "$(id -u)" = 0 ] && id spark >/dev/null 2>&1; then
    exec setpriv --reuid=spark --regid=spark --init-groups /usr/bin/tini -s -- "$@"
  fi
  exec /usr/bin/tini -s -- "$@"
}

# The executor's classpath, in the official image's order: conf dir first, then
# SPARK_CLASSPATH (spark.executor.extraClassPath), Spark's jars, extra entries and the
# working directory (SPARK-43540).
executor_classpath() {
  local cp="${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}${SPARK_HOME}/jars/*"
  if [ -n "${SPARK_EXTRA_CLASSPATH:-}" ]; then
    cp="$cp:$SPARK_EXTRA_CLASSPATH"
  fi
  if [ -n "${HADOOP_CONF_DIR:-}" ]; then
    cp="$HADOOP_CONF_DIR:$cp"
  fi
  cp="${SPARK_CONF_DIR:-$SPARK_HOME/conf}:$cp:$PWD"
  if [ -n "${SPARK_DIST_CLASSPATH:-}" ]; then
    cp="$cp:$SPARK_DIST_CLASSPATH"
  fi
  printf '%s' "$cp"
}

# SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ... in numeric order (10 after 9), one option
# each: values may hold spaces and are passed as one argument.
executor_java_opts() {
  local name
  while read -r name; do
    EXECUTOR_JAVA_OPTS+=("${!name}")
  done < <(compgen -e | sed -n 's/^SPARK_JAVA_OPT_\([0-9][0-9]*\)$/\1 &/p' | sort -n | cut -d' ' -f2)
}

require_env() {
  local missing=() name
  for name in "$@"; do
    [ -n "${!name:-}" ] || missing+=("$name")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "entrypoint: $1 mode needs ${missing[*]} (Spark on Kubernetes sets them on the pod)" >&2
    exit 64
  fi
}

# PySpark reads these from the environment of the JVM's children: keep them exported.
[ -z "${PYSPARK_PYTHON+x}" ] || export PYSPARK_PYTHON
[ -z "${PYSPARK_DRIVER_PYTHON+x}" ] || export PYSPARK_DRIVER_PYTHON
# An image that adds a Hadoop distribution (HADOOP_HOME) gets its jars on the classpath,
# unless SPARK_DIST_CLASSPATH was set explicitly.
if [ -n "${HADOOP_HOME:-}" ] && [ -z "${SPARK_DIST_CLASSPATH:-}" ]; then
  SPARK_DIST_CLASSPATH=$("$HADOOP_HOME/bin/hadoop" classpath)
  export SPARK_DIST_CLASSPATH
fi

case "${1:-}" in
  driver)
    shift
    require_env SPARK_DRIVER_BIND_ADDRESS
    run "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=$SPARK_DRIVER_BIND_ADDRESS" \
      --deploy-mode client \
      "$@"
    ;;
  executor)
    shift
    require_env SPARK_DRIVER_URL SPARK_EXECUTOR_ID SPARK_EXECUTOR_CORES SPARK_EXECUTOR_MEMORY \
      SPARK_APPLICATION_ID SPARK_EXECUTOR_POD_IP
    EXECUTOR_JAVA_OPTS=()
    executor_java_opts
    cmd=(
      "$JAVA_HOME/bin/java"
      "${EXECUTOR_JAVA_OPTS[@]}"
      "-Xms$SPARK_EXECUTOR_MEMORY"
      "-Xmx$SPARK_EXECUTOR_MEMORY"
      -cp "$(executor_classpath)"
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend
      --driver-url "$SPARK_DRIVER_URL"
      --executor-id "$SPARK_EXECUTOR_ID"
      --cores "$SPARK_EXECUTOR_CORES"
      --app-id "$SPARK_APPLICATION_ID"
      --hostname "$SPARK_EXECUTOR_POD_IP"
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}"
    )
    if [ -n "${SPARK_EXECUTOR_POD_NAME:-}" ]; then
      cmd+=(--podName "$SPARK_EXECUTOR_POD_NAME")
    fi
    run "${cmd[@]}"
    ;;
  "")
    exec /bin/bash
    ;;
  *)
    exec "$@"
    ;;
esac

# The Spark base image, for machines where apache/spark:<v>-python3 cannot be pulled
# (`make image` builds it with podman/buildah on a Debian root filesystem made by
# debootstrap). It provides what the official python3 image provides and what
# spark-jobs/Dockerfile and the spark-operator image expect of their SPARK_IMAGE:
#   - a Java 17 runtime (JAVA_HOME=/opt/java/openjdk), Python 3 with pip, tini, procps
#   - Spark at SPARK_HOME=/opt/spark: bin/, sbin/ and jars/ of the pyspark wheel of
#     spark_version (pip-installed, so `import pyspark` works with the system Python)
#   - the spark user and group (uid/gid 185), /opt/spark/work-dir as working directory
#   - /opt/entrypoint.sh (driver / executor / pass-through, see entrypoint.sh) and
#     /opt/decom.sh (executor decommissioning)
#
# The base image (BASE_IMAGE) must already carry the Debian packages (the debootstrap
# --include list of ansible/roles/kube_images): this file installs nothing with apt.
# Build context: this directory's entrypoint.sh and decom.sh, plus wheels/ holding the
# pyspark wheel (pip then skips the ~450 MB download; an empty wheels/ works too).
ARG BASE_IMAGE=localhost/kafka-patterns-debian:bookworm
FROM ${BASE_IMAGE}
ARG SPARK_VERSION=set-by-make-image
ARG SPARK_UID=185

ENV JAVA_HOME=/opt/java/openjdk \
    SPARK_HOME=/opt/spark \
    LANG=C.UTF-8 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Java under the same path as the official image (eclipse-temurin), the spark user.
RUN set -eu; \
    for tool in java python3 tini ps getent setpriv; do \
      command -v "$tool" >/dev/null || { echo "the base image lacks $tool" >&2; exit 1; }; \
    done; \
    mkdir -p /opt/java; \
    ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" "$JAVA_HOME"; \
    "$JAVA_HOME/bin/java" -version; \
    groupadd --system --gid="${SPARK_UID}" spark; \
    useradd --system --uid="${SPARK_UID}" --gid=spark --home-dir /home/spark --create-home \
      --shell /usr/sbin/nologin spark

# pyspark (and its py4j) into the system Python; PIP_BREAK_SYSTEM_PACKAGES: this image's
# Python exists to run Spark.
RUN --mount=type=bind,source=wheels,target=/tmp/wheels \
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir --find-links /tmp/wheels \
      "pyspark==${SPARK_VERSION}"

# /opt/spark as a Spark distribution: the wheel's bin, sbin and jars (the jars
# directory is the one Spark loads; images built on top add jars there). conf/ stays
# absent: Spark on Kubernetes mounts the application's configuration there.
# (SPARK_LOCAL_IP for the check: a build container's hostname need not resolve.)
COPY entrypoint.sh decom.sh /opt/
RUN set -eu; \
    pyspark=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'); \
    mkdir -p "$SPARK_HOME/work-dir"; \
    for d in bin sbin jars; do ln -s "$pyspark/$d" "$SPARK_HOME/$d"; done; \
    echo "Spark ${SPARK_VERSION} (pyspark wheel, $pyspark)" > "$SPARK_HOME/RELEASE"; \
    chown spark:spark "$SPARK_HOME/work-dir"; \
    chmod g+w "$SPARK_HOME/work-dir"; \
    chmod 0755 /opt/entrypoint.sh /opt/decom.sh; \
    version=$(SPARK_LOCAL_IP=127.0.0.1 "$SPARK_HOME/bin/spark-submit" --version 2>&1) \
      || { echo "$version" >&2; exit 1; }; \
    echo "$version" | grep -q "version ${SPARK_VERSION}" \
      || { echo "$version" >&2; echo "spark-submit is not Spark ${SPARK_VERSION}" >&2; exit 1; }

LABEL org.opencontainers.image.title="kafka-patterns-spark-base" \
      org.opencontainers.image.description="Spark ${SPARK_VERSION} (pyspark wheel) on Debian, Java 17, Python 3"
WORKDIR /opt/spark/work-dir
USER ${SPARK_UID}
ENTRYPOINT ["/opt/entrypoint.sh"]

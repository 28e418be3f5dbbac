# The kubeflow spark-operator image, built the way upstream's Dockerfile builds it
# (github.com/kubeflow/spark-operator, tag v<spark_operator_version>): a Spark image
# (the operator runs spark-submit to start drivers), tini, the operator binary at
# /usr/bin/spark-operator, the webhook's certificate directory, the spark user.
#
# The binary is built outside (`make image`: go build of the published Go module,
# ansible/roles/local_kubernetes/kube_binaries/files/spark-operator), not in a builder stage: no
# golang image can be pulled here. Build context:
#   spark-operator                  the linux binary
#   spark-operator-entrypoint.sh    this directory's entry point
# (both executable: COPY keeps the mode).
# SPARK_IMAGE: the official apache/spark image where a registry is reachable, the
# project's spark-base image (spark-base.Dockerfile) otherwise.
ARG SPARK_VERSION=set-by-make-image
ARG SPARK_IMAGE=docker.io/apache/spark:${SPARK_VERSION}-python3

FROM ${SPARK_IMAGE}
ARG SPARK_UID=185
ARG SPARK_GID=185

USER root

# The official image ships tini already; install it only where it is missing.
RUN command -v tini >/dev/null \
    || { apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*; }

RUN mkdir -p /etc/k8s-webhook-server/serving-certs /home/spark \
    && chmod -R g+rw /etc/k8s-webhook-server/serving-certs \
    && chown -R spark /etc/k8s-webhook-server/serving-certs /home/spark

COPY spark-operator /usr/bin/spark-operator
COPY spark-operator-entrypoint.sh /usr/bin/entrypoint.sh

USER ${SPARK_UID}:${SPARK_GID}
ENTRYPOINT ["/usr/bin/entrypoint.sh"]

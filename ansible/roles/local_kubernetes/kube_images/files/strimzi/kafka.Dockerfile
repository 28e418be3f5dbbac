# A Strimzi-compatible Kafka image (what the operator runs for Kafka nodes), as upstream's
# docker-images/kafka-based/kafka lays it out, without Apache's tarball (not reachable):
# Kafka's jars from Maven Central (the same closure the local path runs), the launcher
# scripts Strimzi's run scripts call (kafka-bin/, written by the project), Strimzi's run
# scripts, the kafka-agent and tracing-agent jars built from the source archive, the
# config provider Strimzi configures, the JMX exporter agent. No Kafka Exporter and no
# Cruise Control: neither is obtainable here (leave them disabled in the Kafka CR).
# Build context: libs/ bin/ scripts/ jmx-exporter/.
ARG BASE_IMAGE=set-by-make-image
FROM ${BASE_IMAGE}
ARG KAFKA_VERSION
ARG STRIMZI_VERSION

RUN useradd -r -m -u 1001 -g 0 kafka
ENV KAFKA_HOME=/opt/kafka KAFKA_VERSION=${KAFKA_VERSION} STRIMZI_VERSION=${STRIMZI_VERSION} \
    JMX_EXPORTER_HOME=/opt/prometheus-jmx-exporter
COPY libs/ /opt/kafka/libs/
COPY bin/ /opt/kafka/bin/
COPY scripts/ /opt/kafka/
COPY jmx-exporter/ /opt/prometheus-jmx-exporter/
RUN mkdir /opt/kafka/plugins
WORKDIR /opt/kafka
USER 1001

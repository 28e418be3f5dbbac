#!/usr/bin/env bash
# Build Strimzi's operators and Kafka-side agents from the upstream source archive (the
# offline path: where quay.io/strimzi cannot be pulled). Facts behind each step:
# ../shared/reference/strimzi-from-source.md.
#
#   strimzi-build.sh <source archive> <work dir> <maven repository> <JDK 21+ home>
#
# Leaves in <work dir>/out: operator/ (bin/ and lib/ of the cluster, topic and user
# operators and kafka-init, as upstream's operator image has them), kafka-agent.jar and
# tracing-agent.jar.
# Idempotent: the source is unpacked afresh on every run (the caller runs it only when
# its inputs changed); Maven's repository is kept, so a rebuild downloads nothing.
set -euo pipefail
archive=$1 work=$2 repo=$3 jdk=$4

rm -rf "$work/src" "$work/out"
mkdir -p "$work/src" "$work/out" "$repo"
tar -xzf "$archive" -C "$work/src" --strip-components=1
cd "$work/src"
version=$(cat release.version)

# Tests are not built (-Dmaven.test.skip), but Maven still resolves every declared
# dependency of a module, test scope included: two test-only dependencies are on no
# reachable repository, and the test jars of other modules (type test-jar) are not built.
# Drop those dependencies from every pom.
find . -name pom.xml -not -path '*/systemtest/*' -print0 | xargs -0 perl -0pi -e '
  s{\s*<dependency>(?:(?!</dependency>).)*?</dependency>}{
    my $dep = $&;
    $dep =~ m{<type>test-jar</type>|<artifactId>(?:strimzi-test-container|fault-injection-source-connector)</artifactId>}
      ? "" : $dep }gse'
if grep -rq --include=pom.xml -e '<artifactId>strimzi-test-container</artifactId>' \
     cluster-operator topic-operator user-operator; then
  echo "strimzi-build.sh: the test-only dependencies are still in a module pom" >&2
  exit 1
fi

# PATH too: the build runs `java` itself (the CRD generator, exec-maven-plugin).
export JAVA_HOME=$jdk PATH=$jdk/bin:$PATH JDK_JAVAC_OPTIONS=-proc:full
export MAVEN_OPTS="${MAVEN_OPTS:-} -Xmx1g"
# -Dmdep.analyze.skip: with tests skipped, the test dependencies count as unused and the
# verify phase (install) fails on them. -Dlombok.version: 1.18.32 crashes on javac 25.
# fabric8 7.8.0's OpenShift artifacts are not on Maven Central, 7.7.0's are
# (API-compatible for what the operators call).
mvn_flags=(-B -q -Dmaven.repo.local="$repo"
  -Dmaven.test.skip=true -DskipTests -Dmaven.javadoc.skip=true -Dspotbugs.skip=true
  -Dcheckstyle.skip=true -Dmdep.analyze.skip=true -Dmaven.compiler.fork=true -Dlombok.version=1.18.42
  -Dfabric8.kubernetes-client.version=7.7.0 -Dfabric8.openshift-client.version=7.7.0
  -Dfabric8.kubernetes-model.version=7.7.0 -Dfabric8.zjsonpatch.version=7.7.0)

# The cluster operator validates a Kafka CR's config against a model of each supported
# Kafka version (cluster-operator/src/main/resources/kafka-<v>-config-model.json), which
# upstream's config-model-generator/build-config-models.sh generates from that version's
# jars before the operator is built; without it every reconciliation fails ("Configuration
# model /kafka-<v>-config-model.json was not found"). The same steps, without yq: the
# supported versions of kafka-versions.yaml as <version>=<Maven version>.
mvn "${mvn_flags[@]}" -pl config-model -am install
supported=$(awk '/^- version:/ {v = $3; m = $3} /^  maven-version:/ {m = $2} /^  supported: true/ {print v "=" m}' \
  kafka-versions.yaml)
for pair in $supported; do
  (cd config-model-generator && mvn "${mvn_flags[@]}" -Pgenerate-model verify exec:java \
    -Dkafka-metadata-version="${pair#*=}" \
    -Dconfig-model-file="../cluster-operator/src/main/resources/kafka-${pair%%=*}-config-model.json")
done
ls cluster-operator/src/main/resources/kafka-*-config-model.json

mvn "${mvn_flags[@]}" \
  -pl cluster-operator,topic-operator,user-operator,kafka-init,kafka-agent,tracing-agent -am \
  package

# As upstream's docker-images/operator/Makefile: every operator's dist zip (the assembly
# writes them to docker-images/artifacts/binaries/) unpacked into one tree (bin/ with the
# *_run.sh scripts, lib/ with the jars they share).
mkdir -p "$work/out/operator"
for module in cluster-operator topic-operator user-operator kafka-init; do
  unzip -qo "docker-images/artifacts/binaries/$module-$version-dist.zip" -d "$work/out/operator"
done
# The agents the Kafka and Connect images put in Kafka's libs/.
for agent in kafka-agent tracing-agent; do
  unzip -qoj "docker-images/artifacts/binaries/$agent-$version-dist.zip" "lib/io.strimzi.$agent-$version.jar" -d "$work/out"
  mv "$work/out/io.strimzi.$agent-$version.jar" "$work/out/$agent.jar"
done
echo "strimzi-build.sh: built into $work/out"

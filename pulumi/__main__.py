"""The Kubernetes path: namespaces, the two operators, the Secrets and volumes our chart
refers to and does not create, then our chart (one release, or two on a stack that also
runs a Strimzi-mode release beside a bring-your-own-Kafka one).

    make deploy STACK=<stack>     (runs pulumi up --stack <stack> in pulumi/)
"""

from __future__ import annotations

from kp_infra import settings as settings_mod
from kp_infra.namespaces import Namespaces
from kp_infra.patterns import PatternsChart
from kp_infra.pods_access import PodsAccessSecrets
from kp_infra.schema_registry import SchemaRegistrySecrets
from kp_infra.spark_operator import SparkOperator
from kp_infra.strimzi import StrimziOperator
from kp_infra.volumes import HostPathVolumes, host_volumes
from kp_infra.webhook import admitted_namespace

import pulumi

settings = settings_mod.load()
versions = settings.versions
releases = settings.releases

namespaces = Namespaces("namespaces", platform=settings.namespace, operators=settings.operator_namespace,
                        others=[r.namespace for r in releases[1:]])
after_namespaces = pulumi.ResourceOptions(depends_on=[namespaces])
# The operator watches the releases that run a Strimzi Kafka (the platform namespace when
# every release brings its own: it may still hold a user's KafkaTopics).
strimzi_namespaces = [r.namespace for r in releases
                      if not settings.release_effective_values(r)["kafka"]["external"]["enabled"]]
strimzi_namespaces = strimzi_namespaces or [settings.namespace]
image_inputs = settings.image_inputs
strimzi_values = settings.strimzi_values
if "strimzi-operator" in image_inputs:
    # The images keep their tags when rebuilt (never pulled): their inputs' key rolls the
    # operator out when its image changed.
    strimzi_values = settings_mod.deep_merge(
        strimzi_values, {"annotations": {"kafka-patterns/image-inputs": image_inputs["strimzi-operator"]}})
strimzi = StrimziOperator("strimzi", version=versions["strimzi_version"], namespace=namespaces.operators_name,
                          watch=strimzi_namespaces, chart_dir=settings.strimzi_chart_dir, values=strimzi_values,
                          release_name=settings.strimzi_release_name, opts=after_namespaces)
spark_operator = SparkOperator("spark-operator", version=versions["spark_operator_version"],
                               namespace=namespaces.operators_name, job_namespaces=settings.job_namespaces,
                               chart_dir=settings.spark_operator_chart_dir, values=settings.spark_operator_values,
                               opts=after_namespaces)
before_chart = [strimzi, spark_operator]
# The registry's pod mounts two Secrets the chart does not create (none when it is off).
if settings.schema_registry_enabled:
    before_chart.append(SchemaRegistrySecrets(
        "schema-registry", secrets=settings.registry_secrets, values=settings.effective_values["schemaRegistry"],
        namespace=namespaces.platform_name, opts=after_namespaces))
# A stack on this machine: the CA, users' and PostgreSQL Secrets of `make up`'s Kafka.
if settings.pods_access_dir is not None:
    before_chart.append(PodsAccessSecrets(
        "pods-access", access_dir=settings.pods_access_dir, values=settings.effective_values,
        catalogue=settings.catalogue, namespace=settings.namespace,
        postgres_namespaces=[r.namespace for r in releases], opts=after_namespaces))
volumes = host_volumes(settings)
if volumes:
    before_chart.append(HostPathVolumes("volumes", volumes=volumes, opts=after_namespaces))

# The CRDs come with the operators' charts: our custom resources only after them, and
# only once the spark-operator's webhook admits SparkApplications.
charts = []
for index, release in enumerate(releases):
    namespace = admitted_namespace(release.namespace, spark_operator.release.status, versions["spark_version"])
    values = settings.release_values(release)
    charts.append(PatternsChart("patterns" if index == 0 else f"patterns-{release.namespace}", values=values,
                                namespace=namespace, opts=pulumi.ResourceOptions(depends_on=before_chart)))

pulumi.export("namespace", namespaces.platform_name)
pulumi.export("operator_namespace", namespaces.operators_name)
pulumi.export("strimzi_namespaces", [r.namespace for r in releases[1:]])
pulumi.export("cluster_name", settings.cluster_name)
pulumi.export("connect_name", settings.connect_name)
pulumi.export("kafka_external", bool(settings.effective_values["kafka"]["external"]["enabled"]))
pulumi.export("connect_enabled", bool(settings.effective_values["connect"]["enabled"]))
pulumi.export("bootstrap_address", settings.bootstrap_address)
pulumi.export("connect_rest", settings.connect_rest_url)
pulumi.export("postgres_host", settings.effective_values["postgres"]["host"])
pulumi.export("postgres_secrets", settings.postgres_secrets)
pulumi.export("schema_registry", settings.schema_registry_enabled)

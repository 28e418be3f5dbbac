"""The Kubernetes path: namespaces, the two operators and the schema registry's Secrets,
then our chart.

    cd pulumi && pulumi up --stack dev     (make deploy does this)
"""

from __future__ import annotations

from kp_infra import settings as settings_mod
from kp_infra.namespaces import Namespaces
from kp_infra.patterns import PatternsChart
from kp_infra.schema_registry import SchemaRegistrySecrets
from kp_infra.spark_operator import SparkOperator
from kp_infra.strimzi import StrimziOperator

import pulumi

settings = settings_mod.load()
versions = settings.versions

namespaces = Namespaces("namespaces", platform=settings.namespace, operators=settings.operator_namespace)
after_namespaces = pulumi.ResourceOptions(depends_on=[namespaces])

strimzi = StrimziOperator("strimzi", version=versions["strimzi_version"], namespace=namespaces.operators_name,
                          platform_namespace=namespaces.platform_name, opts=after_namespaces)
spark_operator = SparkOperator("spark-operator", version=versions["spark_operator_version"],
                               namespace=namespaces.operators_name, platform_namespace=namespaces.platform_name,
                               opts=after_namespaces)
# The registry's pod mounts two Secrets the chart does not create (none when it is off).
registry = [SchemaRegistrySecrets("schema-registry", secrets=settings.registry_secrets,
                                  values=settings.effective_values["schemaRegistry"],
                                  namespace=namespaces.platform_name, opts=after_namespaces)
            ] if settings.schema_registry_enabled else []
# The CRDs come with the operators' charts: our custom resources only after them.
patterns = PatternsChart("patterns", values=settings.chart_values, namespace=namespaces.platform_name,
                         opts=pulumi.ResourceOptions(depends_on=[strimzi, spark_operator, *registry]))

pulumi.export("namespace", namespaces.platform_name)
pulumi.export("operator_namespace", namespaces.operators_name)
pulumi.export("cluster_name", settings.cluster_name)
pulumi.export("connect_name", settings.connect_name)
pulumi.export("bootstrap_address", settings.bootstrap_address)
pulumi.export("connect_rest", settings.connect_rest_url)
pulumi.export("postgres_host", settings.effective_values["postgres"]["host"])
pulumi.export("postgres_secrets", settings.postgres_secrets)
pulumi.export("schema_registry", settings.schema_registry_enabled)

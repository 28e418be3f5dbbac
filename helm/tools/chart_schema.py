"""Write helm/kafka-patterns/values.schema.json: the chart's own values, the
catalogue keys (copied from catalogue/catalogue.schema.json, so that they are
declared once) and the pinned-version keys of catalogue/versions.yml.

    python helm/tools/chart_schema.py          # rewrite the file
    python helm/tools/chart_schema.py --check  # exit 1 when it is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE_SCHEMA = ROOT / "catalogue" / "catalogue.schema.json"
VALUES_SCHEMA = ROOT / "helm" / "kafka-patterns" / "values.schema.json"

# Keys of versions.yml the templates read; rendering without them fails on the schema.
REQUIRED_VERSIONS = ["kafka_version", "spark_version", "debezium_version", "debezium_jdbc_version"]


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": props}
    if required:
        out["required"] = required
    return out


STR = {"type": "string"}
INT = {"type": "integer", "minimum": 0}
QTY = {"type": ["string", "integer"]}
NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
RESOURCES = {"type": "object"}  # a core/v1 ResourceRequirements, checked by the API server
SECRET_REF = _obj({"name": NAME, "key": STR}, ["name", "key"])
PDB = {"type": ["object", "null"], "properties": {"maxUnavailable": INT}, "additionalProperties": False}
# A Strimzi probe (KafkaConnect spec.livenessProbe / readinessProbe); {} = Strimzi's defaults.
PROBE = {"type": "object", "additionalProperties": False, "properties": {
    k: {"type": "integer", "minimum": 0 if k == "initialDelaySeconds" else 1}
    for k in ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold")}}
SPREAD = _obj({"enabled": {"type": "boolean"}, "topologyKey": STR,
               "whenUnsatisfiable": {"enum": ["DoNotSchedule", "ScheduleAnyway"]}})
POOL = _obj({"replicas": {"type": "integer", "minimum": 1},
             "storage": _obj({"size": QTY, "class": STR}, ["size"]),
             "resources": RESOURCES})
RESTART = _obj({"type": {"enum": ["Never", "Always", "OnFailure"]}, "onFailureRetries": INT,
                "onFailureRetryInterval": INT, "onSubmissionFailureRetries": INT,
                "onSubmissionFailureRetryInterval": INT}, ["type"])
# A CPU quantity ("250m", "0.5", 1), "" = unset.
CPU = {"type": ["string", "number"], "pattern": "^([0-9]+(\\.[0-9]+)?m?)?$", "exclusiveMinimum": 0}
SPARK_POD = _obj({"cores": {"type": "integer", "minimum": 1}, "coreRequest": CPU, "coreLimit": CPU,
                  "memory": STR, "instances": {"type": "integer", "minimum": 1}})
# true, false or "auto" (decided by the chart, e.g. from the cluster's APIs).
AUTO_BOOL = {"enum": [True, False, "auto"]}
PORT = {"type": "integer", "minimum": 1024, "maximum": 65535}
REGEX = {"type": "string", "minLength": 1}
JOB_NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 40}
JOB_NAMES = {"type": "array", "items": JOB_NAME, "uniqueItems": True}


def per_job(value: dict[str, Any]) -> dict[str, Any]:
    """{<job name>: value}."""
    return {"type": "object", "propertyNames": JOB_NAME, "additionalProperties": value}


# host:port[,host:port...]; "" = unset.
BOOTSTRAP = {"type": "string", "pattern": "^([^,\\s]+:[0-9]{1,5}(,[^,\\s]+:[0-9]{1,5})*)?$"}
EXTERNAL_KAFKA = {
    **_obj({"enabled": {"type": "boolean"},
            "bootstrap": BOOTSTRAP,
            # name "" = the system trust store (public CAs).
            "caSecret": _obj({"name": {"type": "string", "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$",
                                       "maxLength": 63},
                              "key": {"type": "string", "minLength": 1}}, ["name", "key"]),
            "saslMechanism": {"enum": ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"]},
            "userNames": per_job({"type": "string", "minLength": 1})}),
    # Enabled needs a bootstrap.
    "if": {"properties": {"enabled": {"const": True}}, "required": ["enabled"]},
    "then": {"properties": {"bootstrap": {"minLength": 1}}, "required": ["bootstrap"]},
}

CHART_VALUES: dict[str, Any] = {
    "kafka": _obj({
        "clusterName": {"type": "string", "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"},
        "external": EXTERNAL_KAFKA,
        "metadataVersion": STR,
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "nodePools": {"enum": ["separate", "combined"]},
        "controllers": POOL,
        "brokers": POOL,
        "rack": _obj({"type": {"enum": ["topology-label", "environment-variable"]},
                      "topologyKey": STR, "envVarName": STR}, ["type"]),
        "listener": _obj({"name": {"type": "string", "pattern": "^[a-z0-9]{1,11}$"},
                          "port": {"type": "integer", "minimum": 9092}}, ["name", "port"]),
        # For clients outside the cluster; `configuration` is Strimzi's listener
        # configuration, which its CRD validates.
        "externalListener": _obj({"enabled": {"type": "boolean"},
                                  "name": {"type": "string", "pattern": "^[a-z0-9]{1,11}$"},
                                  "port": {"type": "integer", "minimum": 9092},
                                  "type": {"enum": ["nodeport", "loadbalancer", "route", "ingress"]},
                                  "configuration": {"type": "object"},
                                  "users": {"type": "array", "items": STR}}, ["enabled"]),
        "config": {"type": "object"},
        "entityOperator": _obj({"topicOperator": {"type": "object"}, "userOperator": {"type": "object"}}),
        "podDisruptionBudget": PDB,
        "topologySpread": SPREAD,
    }),
    "connect": _obj({
        "enabled": {"type": "boolean"},
        "replicas": INT,
        "resources": RESOURCES,
        "image": STR,
        "build": _obj({"image": {"type": "string", "minLength": 1}, "pushSecret": STR}, ["image"]),
        "connectorConfig": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": {"type": ["string", "integer", "boolean"]}}},
        "livenessProbe": PROBE,
        "readinessProbe": PROBE,
        "podDisruptionBudget": PDB,
        "topologySpread": SPREAD,
    }),
    "postgres": _obj({
        "host": {"type": "string", "minLength": 1},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "database": STR, "appUser": STR, "appPasswordSecret": SECRET_REF,
        "cdcUser": STR, "cdcPasswordSecret": SECRET_REF,
    }, ["host", "port", "database"]),
    "spark": _obj({
        "enabled": {"type": "boolean"},
        "image": _obj({"repository": {"type": "string", "minLength": 1}, "tag": STR,
                       "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}}, ["repository"]),
        "launcher": {"type": "string", "pattern": "^local://.+\\.py$"},
        "serviceAccount": NAME,
        "jobs": _obj({"include": JOB_NAMES}),
        "sparkConf": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
        "driver": SPARK_POD,
        "executor": SPARK_POD,
        "restartPolicy": RESTART,
        "checkpoint": _obj({"mountPath": {"type": "string", "pattern": "^/"}, "claimName": STR,
                            "create": {"type": "boolean"}, "size": QTY, "storageClass": STR}),
        "scheduled": _obj({"schedules": per_job({"type": "string", "minLength": 1}),
                           "concurrencyPolicy": {"enum": ["Allow", "Forbid", "Replace"]},
                           "successfulRunHistoryLimit": INT, "failedRunHistoryLimit": INT,
                           "restartPolicy": RESTART}),
    }),
    "clients": _obj({
        "enabled": {"type": "boolean"},
        "jobs": _obj({"include": JOB_NAMES}),
        "replicas": per_job(INT),
        # Numbers too ([--batch, 50]): the chart passes them as strings.
        "args": per_job({"type": "array", "items": {"type": ["string", "number"]}}),
        "resources": RESOURCES,
        "topologySpread": SPREAD,
    }),
    "monitoring": _obj({
        "jmxExporter": _obj({"enabled": {"type": "boolean"}}),
        "kafkaExporter": _obj({"enabled": {"type": "boolean"}, "topicRegex": REGEX, "groupRegex": REGEX,
                               "resources": RESOURCES}),
        "lagExporter": _obj({"enabled": AUTO_BOOL, "user": NAME, "port": PORT, "groupsRegex": STR,
                             "resources": RESOURCES}),
        "canary": _obj({"enabled": {"type": "boolean"}, "user": NAME, "topic": {"type": "string", "minLength": 1},
                        "group": {"type": "string", "minLength": 1},
                        "rate": {"type": "number", "exclusiveMinimum": 0},
                        "graceSeconds": {"type": "number", "exclusiveMinimum": 0},
                        "port": PORT, "resources": RESOURCES}),
        "sparkDrivers": _obj({"port": PORT}),
        "podMonitors": _obj({"enabled": AUTO_BOOL,
                             "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                             # A Prometheus duration ("30s", "1m"); "" = the Prometheus' own.
                             "interval": {"type": "string", "pattern": "^(([0-9]+(ms|s|m|h|d|w|y))+)?$"}}),
        "prometheusRule": _obj({"enabled": AUTO_BOOL,
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}),
    }),
    "schemaRegistry": _obj({
        "enabled": {"type": "boolean"},
        "image": _obj({"repository": {"type": "string", "minLength": 1}, "tag": STR,
                       "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}}, ["repository"]),
        "port": PORT,
        "runAsUser": {"type": "integer", "minimum": 1},
        "javaOpts": STR,
        "tls": _obj({"secret": NAME}, ["secret"]),
        "users": _obj({"secret": NAME, "key": {"type": "string", "pattern": "^[-._a-zA-Z0-9]+$"}}, ["secret", "key"]),
        "resources": RESOURCES,
    }),
    "global": {"type": "object"},
}


def build() -> dict[str, Any]:
    catalogue = json.loads(CATALOGUE_SCHEMA.read_text())
    props = {**CHART_VALUES, **catalogue["properties"]}
    return {
        "$schema": "https://json-schema.org/draft-07/schema#",
        "title": "kafka-patterns values: chart settings + pattern catalogue + pinned versions",
        "$comment": "Generated by helm/tools/chart_schema.py; catalogue keys from catalogue/catalogue.schema.json.",
        "type": "object",
        "additionalProperties": False,
        "required": [*catalogue["required"], *REQUIRED_VERSIONS],
        "properties": props,
        # Every pin of versions.yml is a quoted "<thing>_version" string.
        "patternProperties": {"^[a-z0-9_]+_version$": {"type": "string", "minLength": 1}},
    }


def render() -> str:
    return json.dumps(build(), indent=2) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not VALUES_SCHEMA.exists() or VALUES_SCHEMA.read_text() != text:
            print(f"{VALUES_SCHEMA.relative_to(ROOT)} is out of date: run python helm/tools/chart_schema.py",
                  file=sys.stderr)
            return 1
        return 0
    VALUES_SCHEMA.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

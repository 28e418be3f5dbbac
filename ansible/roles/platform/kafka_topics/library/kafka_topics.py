#!/usr/bin/python
"""Ansible module: make Kafka's topics match a list (create, add partitions, set configs)."""

import time

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: kafka_topics
short_description: Create Kafka topics and bring their partitions and configs in line
description:
  - Uses confluent-kafka's AdminClient. Creates missing topics, raises partition
    counts, sets changed topic configs (incremental alter). Never deletes a topic,
    lowers a partition count or changes a replication factor; those are reported as
    warnings because they need a data migration.
options:
  bootstrap_servers: {type: str, required: true, description: Kafka bootstrap servers}
  client_config: {type: dict, default: {}, description: "more librdkafka settings (TLS, SASL) of the admin connection"}
  topics:
    type: list
    elements: dict
    required: true
    description: "[{name, partitions, replicationFactor (optional), config (optional dict)}]"
  default_replication_factor: {type: int, default: 3, description: RF of topics that set none}
  expected_brokers: {type: int, default: 1, description: brokers to wait for before creating}
  timeout: {type: int, default: 60, description: seconds to wait for the brokers and each admin call}
requirements: [confluent-kafka]
"""

RETURN = r"""
created: {description: topics created, type: list, returned: always}
partitions_added: {description: "topics whose partition count was raised", type: dict, returned: always}
configs_changed: {description: "topic -> {key: new value}", type: dict, returned: always}
"""


def wait_for_brokers(admin, expected, timeout):
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        try:
            seen = len(admin.list_topics(timeout=5).brokers)
        except Exception:
            seen = 0
        if seen >= expected:
            return
        time.sleep(1)
    raise TimeoutError(f"only {seen} of {expected} brokers registered after {timeout}s")


def desired_topics(params):
    out = {}
    for t in params["topics"]:
        out[t["name"]] = {
            "partitions": int(t.get("partitions", 1)),
            "replication_factor": int(t.get("replicationFactor", params["default_replication_factor"])),
            "config": {k: str(v) for k, v in (t.get("config") or {}).items()},
        }
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            bootstrap_servers=dict(type="str", required=True),
            client_config=dict(type="dict", default={}, no_log=True),
            topics=dict(type="list", elements="dict", required=True),
            default_replication_factor=dict(type="int", default=3),
            expected_brokers=dict(type="int", default=1),
            timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    try:
        from confluent_kafka.admin import (
            AdminClient,
            AlterConfigOpType,
            ConfigEntry,
            ConfigResource,
            NewPartitions,
            NewTopic,
        )
    except ImportError:
        module.fail_json(msg="kafka_topics needs confluent-kafka in the Python that runs it (make setup installs it)")

    p = module.params
    want = desired_topics(p)
    admin = AdminClient({"bootstrap.servers": p["bootstrap_servers"], **p["client_config"]})
    try:
        wait_for_brokers(admin, p["expected_brokers"], p["timeout"])
    except TimeoutError as e:
        module.fail_json(msg=f"Kafka at {p['bootstrap_servers']}: {e}")

    existing = admin.list_topics(timeout=p["timeout"]).topics
    result = dict(changed=False, created=[], partitions_added={}, configs_changed={}, warnings=[])

    missing = [n for n in want if n not in existing]
    if missing and not module.check_mode:
        futures = admin.create_topics(
            [NewTopic(n, num_partitions=want[n]["partitions"], replication_factor=want[n]["replication_factor"],
                      config=want[n]["config"]) for n in missing],
            operation_timeout=p["timeout"], request_timeout=p["timeout"])
        for name, f in futures.items():
            try:
                f.result()
            except Exception as e:
                module.fail_json(msg=f"creating topic {name}: {e}", **result)
    result["created"] = missing

    grow = {}
    for name, meta in existing.items():
        if name not in want:
            continue
        have = len(meta.partitions)
        rf = len(next(iter(meta.partitions.values())).replicas) if meta.partitions else 0
        if want[name]["partitions"] > have:
            grow[name] = want[name]["partitions"]
        elif want[name]["partitions"] < have:
            result["warnings"].append(f"{name} has {have} partitions, the catalogue says {want[name]['partitions']}: "
                                      "partitions are never removed")
        if rf != want[name]["replication_factor"]:
            result["warnings"].append(f"{name} has replication factor {rf}, the catalogue says "
                                      f"{want[name]['replication_factor']}: reassign partitions to change it")
    if grow and not module.check_mode:
        for _name, f in admin.create_partitions([NewPartitions(n, c) for n, c in grow.items()],
                                               request_timeout=p["timeout"]).items():
            f.result()
    result["partitions_added"] = grow

    present = [n for n in want if n in existing and want[n]["config"]]
    if present:
        described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, n) for n in present],
                                           request_timeout=p["timeout"])
        for res, f in described.items():
            current = f.result()
            diff = {k: v for k, v in want[res.name]["config"].items()
                    if k not in current or current[k].value != v}
            if diff:
                result["configs_changed"][res.name] = diff
        if result["configs_changed"] and not module.check_mode:
            alters = [ConfigResource(ConfigResource.Type.TOPIC, n, incremental_configs=[
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in d.items()])
                for n, d in result["configs_changed"].items()]
            for _, f in admin.incremental_alter_configs(alters, request_timeout=p["timeout"]).items():
                f.result()

    result["changed"] = bool(result["created"] or result["partitions_added"] or result["configs_changed"])
    warnings = result.pop("warnings")
    for w in warnings:
        module.warn(w)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

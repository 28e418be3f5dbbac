#!/usr/bin/python
"""Ansible module: SCRAM users and their ACLs from the catalogue, through Kafka's admin API."""

import os
import re
import secrets
import string
import time

from ansible.module_utils.basic import AnsibleModule

# Links to kafka_patterns.config.acls and .names (module_utils/): the rules of the
# chart's KafkaUser template, written once in Python.
from ansible.module_utils.kafka_patterns_acls import job_acls, user_acls
from ansible.module_utils.kafka_patterns_names import k8s_name

DOCUMENTATION = r"""
module: kafka_users
short_description: One SCRAM-SHA-512 user per catalogue job with least-privilege ACLs, plus an admin
description:
  - Derives the users and their ACLs from the catalogue's jobs exactly as the Helm chart's
    KafkaUser template does (templates/kafka-users.yaml); user name = the chart's kp.k8sName
    of the job name. Read + Describe on the inputs, lookups and state topics, Read on the
    group named after the job, Write + Describe on the output topics (not "postgres:"
    outputs), the state topics and the dead-letter topic, and for a transactional job
    Write + Describe on the transactional id named after the job and IdempotentWrite on
    the cluster.
  - Passwords are random (32 letters and digits), generated once into
    <password_dir>/<user>.password (0600) and set with AlterUserScramCredentials only when
    the file is new or the user has no SCRAM-SHA-512 credential in the cluster.
  - Creates missing ACLs and deletes the managed users' ACLs that the catalogue no longer
    grants. Users outside the list and their ACLs are left alone.
  - The admin user gets a credential and no ACLs: it must be in the brokers' super.users.
options:
  bootstrap_servers: {type: str, required: true, description: Kafka bootstrap servers of the admin connection}
  client_config: {type: dict, default: {}, description: more librdkafka settings of the admin connection}
  jobs: {type: list, elements: dict, required: true, description: the catalogue's jobs}
  users:
    type: list
    elements: dict
    default: []
    description: "the catalogue's other users (name, acls, replaysDeadLetters)"
  password_dir: {type: path, required: true, description: "where <user>.password of each job user lives"}
  admin_user: {type: str, default: admin, description: the super user}
  admin_password_file: {type: path, required: true, description: the admin's password file}
  scram_iterations: {type: int, default: 4096, description: "SCRAM iterations (Kafka's minimum is 4096)"}
  expected_brokers: {type: int, default: 1, description: brokers to wait for}
  timeout: {type: int, default: 60, description: seconds to wait for the brokers and each admin call}
requirements: [confluent-kafka >= 2.2]
"""

RETURN = r"""
users: {description: "user -> its ACLs as [resource type, name, pattern type, operation]", type: dict, returned: always}
credentials_set: {description: users whose SCRAM credential was (re)set, type: list, returned: always}
acls_created: {description: "ACLs created, as user: resource type/name operation", type: list, returned: always}
acls_deleted: {description: ACLs deleted (no longer granted by the catalogue), type: list, returned: always}
"""

PASSWORD_ALPHABET = string.ascii_letters + string.digits
PASSWORD_LENGTH = 32
# Chart resource type -> librdkafka ResourceType name (librdkafka calls the cluster BROKER).
RESOURCE_TYPES = {"topic": "TOPIC", "group": "GROUP", "cluster": "BROKER", "transactionalId": "TRANSACTIONAL_ID"}
CLUSTER_RESOURCE_NAME = "kafka-cluster"
# Chart patternType -> librdkafka ResourcePatternType name.
PATTERN_TYPES = {"literal": "LITERAL", "prefix": "PREFIXED"}


# --- the catalogue -> users and ACLs (pure; the iac tests compare it with the chart) ---

def desired_users(jobs, users=()):
    """user name -> set of ACL tuples: one user per job, then the catalogue's other users."""
    out = {}
    named = [(k8s_name(j["name"]), job_acls(j)) for j in jobs] + [(u["name"], user_acls(u, jobs)) for u in users]
    for name, acls in named:
        if name in out:
            raise ValueError(f"two catalogue jobs or users map to the same Kafka user {name!r}")
        out[name] = acls
    return out


def upper_snake(camel):
    """IdempotentWrite -> IDEMPOTENT_WRITE, Read -> READ (Kafka's enum names)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


# --- talking to Kafka -------------------------------------------------------------------

def wait_for_brokers(admin, expected, timeout):
    deadline = time.monotonic() + timeout
    seen, error = 0, None
    while time.monotonic() < deadline:
        try:
            seen = len(admin.list_topics(timeout=5).brokers)
        except Exception as e:  # reported when the wait gives up
            seen, error = 0, e
        if seen >= expected:
            return
        time.sleep(1)
    raise TimeoutError(f"only {seen} of {expected} brokers registered after {timeout}s"
                       + (f" (last error: {error})" if error else ""))


def read_or_create_password(path, check_mode):
    """(password, created). A new password is written with mode 0600 before it is used."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            password = f.read().strip()
        if not password:
            raise ValueError(f"{path} is empty: delete it and a new password is generated")
        return password, False
    password = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))
    if not check_mode:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(password + "\n")
    return password, True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            bootstrap_servers=dict(type="str", required=True),
            client_config=dict(type="dict", default={}, no_log=True),
            jobs=dict(type="list", elements="dict", required=True),
            users=dict(type="list", elements="dict", default=[]),
            # Paths to the password files, not secrets: shown in the task's result.
            password_dir=dict(type="path", required=True, no_log=False),
            admin_user=dict(type="str", default="admin"),
            admin_password_file=dict(type="path", required=True, no_log=False),
            scram_iterations=dict(type="int", default=4096),
            expected_brokers=dict(type="int", default=1),
            timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    try:
        from confluent_kafka.admin import (
            AclBinding,
            AclBindingFilter,
            AclOperation,
            AclPermissionType,
            AdminClient,
            ResourcePatternType,
            ResourceType,
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )
    except ImportError:
        module.fail_json(msg="kafka_users needs confluent-kafka >= 2.2 in the Python that runs it "
                             "(make setup installs it into .venv)")

    p = module.params
    try:
        want = desired_users(p["jobs"], p["users"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    if p["admin_user"] in want:
        module.fail_json(msg=f"a catalogue job or user maps to the admin user name {p['admin_user']!r}: rename it")
    result = dict(changed=False, users={u: sorted([list(a) for a in acls], key=str) for u, acls in want.items()},
                  credentials_set=[], acls_created=[], acls_deleted=[])

    admin = AdminClient({"bootstrap.servers": p["bootstrap_servers"], **p["client_config"]})
    try:
        wait_for_brokers(admin, p["expected_brokers"], p["timeout"])
    except TimeoutError as e:
        module.fail_json(msg=f"Kafka at {p['bootstrap_servers']}: {e}", **result)
    timeout = p["timeout"]

    # SCRAM credentials: set when the password file is new or the user has none.
    password_files = {u: os.path.join(p["password_dir"], u + ".password") for u in want}
    password_files[p["admin_user"]] = p["admin_password_file"]
    try:
        passwords = {u: read_or_create_password(path, module.check_mode) for u, path in password_files.items()}
        described = admin.describe_user_scram_credentials(request_timeout=timeout).result()
    except Exception as e:
        module.fail_json(msg=f"SCRAM credentials: {e}", **result)
    have_scram = {u for u, d in described.items()
                  if any(i.mechanism == ScramMechanism.SCRAM_SHA_512 for i in d.scram_credential_infos)}
    to_set = sorted(u for u, (_, created) in passwords.items() if created or u not in have_scram)
    if to_set and not module.check_mode:
        info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, p["scram_iterations"])
        futures = admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion(u, info, passwords[u][0].encode()) for u in to_set],
            request_timeout=timeout)
        for user, f in futures.items():
            try:
                f.result()
            except Exception as e:
                module.fail_json(msg=f"setting the SCRAM credential of {user}: {e}", **result)
    result["credentials_set"] = to_set

    # ACLs: what the managed users have vs what the catalogue grants them.
    def key_of(binding):
        return (binding.principal, binding.restype.name, binding.name, binding.resource_pattern_type.name,
                binding.operation.name, binding.permission_type.name, binding.host)

    wanted = {}
    for user, acls in want.items():
        for rtype, name, pattern, op in acls:
            b = AclBinding(ResourceType[RESOURCE_TYPES[rtype]], name if name is not None else CLUSTER_RESOURCE_NAME,
                           ResourcePatternType[PATTERN_TYPES[pattern]], f"User:{user}", "*",
                           AclOperation[upper_snake(op)], AclPermissionType.ALLOW)
            wanted[key_of(b)] = b
    managed = {f"User:{u}" for u in want} | {f"User:{p['admin_user']}"}
    try:
        every = admin.describe_acls(
            AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                             AclOperation.ANY, AclPermissionType.ANY),
            request_timeout=timeout).result()
    except Exception as e:
        module.fail_json(msg=f"describing the ACLs: {e}", **result)
    existing = {key_of(b): b for b in every if b.principal in managed}
    missing = [b for k, b in sorted(wanted.items()) if k not in existing]
    stale = [b for k, b in sorted(existing.items()) if k not in wanted]

    def label(b):
        return f"{b.principal[5:]}: {b.restype.name.lower()}/{b.name} {b.operation.name}"

    if missing and not module.check_mode:
        for b, f in admin.create_acls(missing, request_timeout=timeout).items():
            try:
                f.result()
            except Exception as e:
                module.fail_json(msg=f"creating ACL {label(b)}: {e}", **result)
    if stale and not module.check_mode:
        filters = [AclBindingFilter(b.restype, b.name, b.resource_pattern_type, b.principal, b.host,
                                    b.operation, b.permission_type) for b in stale]
        for b, f in admin.delete_acls(filters, request_timeout=timeout).items():
            try:
                f.result()
            except Exception as e:
                module.fail_json(msg=f"deleting ACL {label(b)}: {e}", **result)
    result["acls_created"] = [label(b) for b in missing]
    result["acls_deleted"] = [label(b) for b in stale]

    result["changed"] = bool(to_set or missing or stale)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

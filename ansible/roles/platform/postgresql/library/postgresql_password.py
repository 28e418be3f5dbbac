#!/usr/bin/python
"""Ansible module: give PostgreSQL roles the passwords of the inventory, only when they differ."""

import base64
import hashlib
import hmac
import os
import shlex

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: postgresql_password
short_description: Set a role's SCRAM-SHA-256 password when it is not the given one
description:
  - Reads the role's stored SCRAM-SHA-256 verifier from pg_authid (as the database
    superuser, through the psql command given) and checks the password against it. Only
    when it does not match (or there is none) the role gets a new verifier, computed
    here, so the password itself never reaches the server, its logs or a process list.
options:
  psql:
    type: str
    required: true
    description: "psql command line of the superuser (e.g. runuser -u postgres -- psql -p 5432 -tA)"
  roles:
    type: list
    elements: dict
    required: true
    no_log: true
    description: "[{name, password}]"
  iterations: {type: int, default: 4096, description: PBKDF2 iterations of a new verifier (PostgreSQL's default)}
"""

RETURN = r"""
changed_roles: {description: roles whose password was set, type: list, returned: always}
"""


def _hmac(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()


def _keys(password, salt, iterations):
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    stored_key = hashlib.sha256(_hmac(salted, b"Client Key")).digest()
    server_key = _hmac(salted, b"Server Key")
    return stored_key, server_key


def scram_matches(verifier, password):
    """True when verifier ("SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>") is the
    password's. ASCII passwords only: PostgreSQL applies SASLprep, which is the identity there."""
    try:
        method, rest = verifier.split("$", 1)
        iter_salt, keys = rest.split("$", 1)
        iterations, salt = iter_salt.split(":", 1)
        stored_b64, server_b64 = keys.split(":", 1)
    except ValueError:
        return False
    if method != "SCRAM-SHA-256":
        return False
    stored, server = _keys(password, base64.b64decode(salt), int(iterations))
    return hmac.compare_digest(stored, base64.b64decode(stored_b64)) and \
        hmac.compare_digest(server, base64.b64decode(server_b64))


def scram_verifier(password, iterations, salt=None):
    salt = salt if salt is not None else os.urandom(16)
    stored, server = _keys(password, salt, iterations)
    b64 = base64.b64encode
    return f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}${b64(stored).decode()}:{b64(server).decode()}"


def sql_literal(text):
    return "'" + text.replace("'", "''") + "'"


def sql_identifier(text):
    return '"' + text.replace('"', '""') + '"'


def main():
    module = AnsibleModule(
        argument_spec=dict(
            psql=dict(type="str", required=True),
            roles=dict(type="list", elements="dict", required=True, no_log=True),
            iterations=dict(type="int", default=4096),
        ),
        supports_check_mode=True,
    )
    psql = shlex.split(module.params["psql"])
    changed_roles = []
    for role in module.params["roles"]:
        name, password = role.get("name"), role.get("password")
        if not name or not password:
            module.fail_json(msg="every role needs a name and a non-empty password (set it in the inventory)")
        rc, out, err = module.run_command(
            [*psql, "-c", f"SELECT coalesce(rolpassword, '') FROM pg_authid WHERE rolname = {sql_literal(name)}"],
            cwd="/tmp")
        if rc != 0:
            module.fail_json(msg=f"reading the password of role {name}: {err.strip()}")
        if out.strip() == "" and "\n" not in out:
            module.fail_json(msg=f"role {name} does not exist")
        if scram_matches(out.strip(), password):
            continue
        changed_roles.append(name)
        if module.check_mode:
            continue
        verifier = scram_verifier(password, module.params["iterations"])
        rc, _, err = module.run_command(
            psql, data=f"ALTER ROLE {sql_identifier(name)} PASSWORD {sql_literal(verifier)};", cwd="/tmp")
        if rc != 0:
            module.fail_json(msg=f"setting the password of role {name}: {err.strip()}")
    module.exit_json(changed=bool(changed_roles), changed_roles=changed_roles)


if __name__ == "__main__":
    main()

"""Who a client is on the local and hosts paths: its catalogue user's SCRAM credential
and the project CA, from the files `make up` writes (role kafka_access).

Every client connects with a user of the catalogue: a job as itself (its name), the
scenario driver of the tests and `make demo` as `harness`, `make bench` as `bench`,
`make status` as `operator`, Connect as `connect`; `admin` is the super user.
Passwords live in files of mode 0600 under .run/ and are never printed.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from kafka_patterns.config import inventory

DEFAULT_USER = "harness"
ADMIN_USER = "admin"
SASL_MECHANISM = "SCRAM-SHA-512"


def run_dir() -> Path:
    """The control machine's state of the inventory's cluster (platform_run_dir):
    .run for the local default, .run/hosts/control for the hosts topology."""
    return inventory.run_dir()


def ca_file() -> Path:
    return run_dir() / "pki" / "ca" / "ca.crt"


def java_config_dir() -> Path:
    """Where java_properties() writes (0600 files in a 0700 directory)."""
    return run_dir() / "kafka-access" / "clients"

_current_user: contextvars.ContextVar[str | None] = contextvars.ContextVar("kafka_user", default=None)


class CredentialsError(RuntimeError):
    """A user's credential is missing; the message names the file and the fix."""


def current_user() -> str:
    """The identity of this process's clients: a job run in this process (as_user),
    else KP_KAFKA_USER, else the scenario driver."""
    return _current_user.get() or os.environ.get("KP_KAFKA_USER") or DEFAULT_USER


@contextlib.contextmanager
def as_user(user: str) -> Iterator[None]:
    """Clients created inside the block connect as `user` (a job run in this process)."""
    token = _current_user.set(user)
    try:
        yield
    finally:
        _current_user.reset(token)


def started_as_job(job: str) -> None:
    """A process started as a job (`python -m kafka_patterns.jobs.<module>`) connects as
    that job unless KP_KAFKA_USER says otherwise; a job run inside another process
    (the scenarios) gets its identity from as_user instead."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name.startswith("kafka_patterns.jobs.") and _current_user.get() is None:
        os.environ.setdefault("KP_KAFKA_USER", job)


def password_file(user: str) -> Path:
    if user == ADMIN_USER:
        return run_dir() / "kafka-access" / "admin.password"
    return run_dir() / "pods-access" / "users" / f"{user}.password"


def password(user: str) -> str:
    path = password_file(user)
    try:
        value = path.read_text().strip()
    except FileNotFoundError:
        raise CredentialsError(f"no password for Kafka user {user!r} in {path}: `make up` creates the catalogue's "
                               f"users (role kafka_access); is {user!r} a job or user of catalogue/catalogue.yaml?"
                               ) from None
    if not value:
        raise CredentialsError(f"{path} is empty: delete it and run `make up` to set a new password")
    return value


def librdkafka_settings(user: str | None = None) -> dict[str, str]:
    """SASL_SSL with the user's SCRAM credential, trusting the project CA."""
    user = user or current_user()
    ca = ca_file()
    if not ca.exists():
        raise CredentialsError(f"no project CA at {ca}: run `make up` (role kafka_access creates it)")
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": SASL_MECHANISM, "sasl.username": user,
            "sasl.password": password(user), "ssl.ca.location": str(ca)}


def java_properties(user: str | None = None) -> Path:
    """A Java client properties file for the user (for Kafka's own tools), mode 0600."""
    user = user or current_user()
    settings = librdkafka_settings(user)
    lines = [
        "security.protocol=SASL_SSL",
        f"sasl.mechanism={SASL_MECHANISM}",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{settings["sasl.password"]}";',
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={ca_file()}",
    ]
    java_config_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    path = java_config_dir() / f"{user}.properties"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def kcat_flags(user: str) -> str:
    """kcat's flags for the user; the password is read from its file, never printed."""
    return (f"-X security.protocol=SASL_SSL -X sasl.mechanisms={SASL_MECHANISM} -X sasl.username={user} "
            f"-X sasl.password=\"$(cat {password_file(user)})\" -X ssl.ca.location={ca_file()}")

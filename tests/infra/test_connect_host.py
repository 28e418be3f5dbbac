"""The Connect worker, as a host: its process, its HTTPS REST port, its config (no
password in it), its secrets (0600, read only by the FileConfigProvider) and its
plugin path (the Debezium plugins, no FileStream)."""

from __future__ import annotations

import re
import socket
import ssl

from helpers import parse_properties

testinfra_hosts = ["ansible://kafka_connect"]

REFERENCE = re.compile(r"^\$\{file:(/[^:}]+):([^:}]+)\}$")


def worker(host):
    """This inventory host's worker: the one whose config listens on its address and port
    (test hosts of other topologies may run workers on the same machine, and a pod of the
    local Kubernetes one whose config is in its container, not on this host)."""
    listener = "https://{}:{}".format(*rest_address(host.ansible.get_variables()))
    procs = [p for p in host.process.filter(comm="java") if "ConnectDistributed" in p.args
             and host.file(p.args.split()[-1]).exists
             and parse_properties(host.file(p.args.split()[-1]).content_string).get("listeners") == listener]
    assert len(procs) == 1, f"expected one Connect worker listening at {listener}, found {len(procs)}"
    return procs[0]


def worker_config(host) -> tuple[str, dict[str, str]]:
    path = worker(host).args.split()[-1]
    return path, parse_properties(host.file(path).content_string)


def worker_secrets(host, props: dict[str, str]) -> dict[str, str]:
    """Every secret the worker holds: its secrets file (the Kafka password, the keystore
    password, the connectors' PostgreSQL passwords) and the REST users' passwords."""
    refs = {m.group(1) for v in props.values() if (m := REFERENCE.match(v))}
    found = {}
    for path in refs:
        found.update(parse_properties(host.file(path).content_string))
    jaas = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", worker(host).args).group(1)
    users = re.search(r'file="([^"]+)"', host.file(jaas).content_string).group(1)
    found.update({f"REST user {u}": pw for u, pw in parse_properties(host.file(users).content_string).items()})
    return {k: v for k, v in found.items() if v}


def rest_address(hostvars) -> tuple[str, int]:
    return hostvars.get("ansible_host", hostvars["inventory_hostname"]), int(hostvars.get("connect_rest_port", 8083))


def test_the_worker_runs_and_listens(host, hostvars):
    worker(host)
    address, port = rest_address(hostvars)
    assert host.socket(f"tcp://{address}:{port}").is_listening


def test_the_worker_keeps_its_state_in_replicated_topics(host, cat):
    _, props = worker_config(host)
    for store in ("config", "offset", "status"):
        assert props[f"{store}.storage.replication.factor"] == str(cat["cluster"]["replicationFactor"])


def test_the_worker_reaches_kafka_as_connect_over_sasl_ssl_with_no_password_in_its_config(host):
    path, props = worker_config(host)
    text = host.file(path).content_string
    for prefix in ("", "producer.", "consumer.", "admin."):
        assert props[f"{prefix}security.protocol"] == "SASL_SSL", prefix
        assert props[f"{prefix}sasl.mechanism"] == "SCRAM-SHA-512", prefix
        assert props[f"{prefix}ssl.truststore.type"] == "PEM", prefix
        jaas = props[f"{prefix}sasl.jaas.config"]
        assert 'username="connect"' in jaas, prefix
        assert re.search(r'password="\$\{file:[^}]+:kafka\.password\}"', jaas), f"{prefix}sasl.jaas.config: {jaas}"
    for key, value in props.items():
        if "password" in key:
            assert REFERENCE.match(value), f"{key} is not a ${{file:...}} reference"
    secrets = worker_secrets(host, props)
    assert {"kafka.password", "rest.keystore.password"} <= set(secrets), sorted(secrets)
    leaked = [what for what, secret in secrets.items() if secret in text]
    assert not leaked, f"{path} holds the secrets: {', '.join(leaked)}"
    assert props["connector.client.config.override.policy"] == "None"


def test_the_config_provider_reads_only_the_secrets_file_of_mode_0600(host):
    _, props = worker_config(host)
    assert props["config.providers"] == "file"
    assert props["config.providers.file.class"] == "org.apache.kafka.common.config.provider.FileConfigProvider"
    secrets_dir = props["config.providers.file.param.allowed.paths"]
    assert "," not in secrets_dir and secrets_dir.endswith("/secrets")
    references = {REFERENCE.match(v).group(1) for k, v in props.items() if REFERENCE.match(v)}
    assert references, "the worker config references no secret"
    assert all(r.startswith(secrets_dir + "/") for r in references), references
    directory = host.file(secrets_dir)
    assert directory.is_directory and directory.mode == 0o700
    for path in references:
        f = host.file(path)
        assert f.is_file and f.mode == 0o600, f"{path}: mode {oct(f.mode)}"
        keys = parse_properties(f.content_string)
        assert {"kafka.password", "rest.keystore.password"} <= set(keys), sorted(keys)


def test_the_rest_api_is_https_with_a_certificate_of_the_project_ca(host, hostvars):
    _, props = worker_config(host)
    address, port = rest_address(hostvars)
    assert props["listeners"] == f"https://{address}:{port}"
    assert props["rest.advertised.listener"] == "https"
    assert props["admin.listeners"] == "", "the admin endpoints are off"
    # The handshake checks the chain against the project CA (the worker's copy, which its
    # Kafka clients trust) and the address against the certificate's SANs.
    context = ssl.create_default_context(cadata=host.file(props["ssl.truststore.location"]).content_string)
    with socket.create_connection((address, port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=address) as tls:
        assert tls.version() in ("TLSv1.3", "TLSv1.2")
    for key in ("listeners.https.ssl.keystore.location", "listeners.https.ssl.truststore.location"):
        store = host.file(props[key])
        assert store.is_file and store.mode & 0o077 == 0, f"{props[key]}: mode {oct(store.mode)}"


def test_the_rest_api_authenticates_from_a_users_file_of_mode_0600(host):
    w = worker(host)
    _, props = worker_config(host)
    assert props["rest.extension.classes"] == \
        "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
    jaas_path = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", w.args).group(1)
    jaas = host.file(jaas_path)
    assert jaas.mode & 0o077 == 0
    users_path = re.search(r'file="([^"]+)"', jaas.content_string).group(1)
    assert "PropertyFileLoginModule" in jaas.content_string
    users = host.file(users_path)
    assert users.is_file and users.mode == 0o600
    assert list(parse_properties(users.content_string)) == ["connect-admin"], "one REST user"
    classpath = w.args.split(" -cp ")[1].split()[0]
    libs = classpath.split(":")[0].removesuffix("*")
    assert any(name.startswith("connect-basic-auth-extension-") for name in host.file(libs).listdir())


def test_the_plugin_path_has_the_debezium_plugins_and_no_filestream(host):
    w = worker(host)
    _, props = worker_config(host)
    plugins = host.file(props["plugin.path"])
    assert plugins.is_directory
    assert set(plugins.listdir()) == {"debezium-connector-postgres", "debezium-connector-jdbc"}
    libs = w.args.split(" -cp ")[1].split()[0].split(":")[0].removesuffix("*")
    assert not [n for n in host.file(libs).listdir() if n.startswith("connect-file-")], "FileStream on the classpath"

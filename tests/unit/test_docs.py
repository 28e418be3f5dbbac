"""The manual (README.md and docs/*.md) stays true to the repository: every `make`
target it names exists in the Makefile, the table of the local cluster's ports shows
the ports the inventory and the role defaults set, and every relative link points at
a file, and a heading, that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from helpers import LOCAL_INVENTORY, ROOT, role_dir

DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOC_IDS = [str(path.relative_to(ROOT)) for path in DOC_FILES]

CODE_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)*)`")
TARGET_NAME = re.compile(r"[a-zA-Z0-9_-]+")


def without_code_blocks(text: str) -> str:
    return CODE_BLOCK.sub("", text)


# --- make targets -------------------------------------------------------------------

# A rule line of the Makefile: one or more targets, then a colon (not `:=`). Recipe
# lines start with a tab and never match.
MAKEFILE_RULE = re.compile(r"^([a-zA-Z0-9_-]+(?: [a-zA-Z0-9_-]+)*):(?!=)")


def makefile_targets() -> set[str]:
    targets: set[str] = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith(".PHONY:"):
            targets.update(line.split(":", 1)[1].split())
        elif rule := MAKEFILE_RULE.match(line):
            targets.update(rule.group(1).split())
    return targets


def code_snippets(text: str) -> list[str]:
    """The lines of the code blocks (comments dropped) and the inline code spans."""
    snippets = [re.sub(r"(^|\s)#.*$", "", line) for block in CODE_BLOCK.findall(text)
                for line in block.splitlines()]
    snippets += [" ".join(span.split()) for span in INLINE_CODE.findall(without_code_blocks(text))]
    return snippets


def make_targets_named_in(snippet: str) -> list[str]:
    """`make -s bootstrap` -> [bootstrap]; `make run PATTERN=x` -> [run]; `make clean && make up`
    -> [clean, up]. Option flags are skipped; a VAR=value or any other word ends the list."""
    targets = []
    for call in re.finditer(r"(?<![\w./-])make(?=\s|$)", snippet):
        for word in snippet[call.end():].split():
            if word.startswith("-"):
                continue
            name = word.rstrip("):;,.")
            if not TARGET_NAME.fullmatch(name):
                break
            targets.append(name)
            if name != word:
                break
    return targets


def test_the_makefile_parser_finds_the_targets_of_multi_target_rules():
    targets = makefile_targets()
    assert {"help", "setup", "up", "test", "kube-up", "hosts-up", "bench-security"} <= targets
    assert not targets & {"ROOT", "SHELL", "PLAYBOOK", "export"}


def test_make_calls_are_read_as_written():
    assert make_targets_named_in("make -s bootstrap") == ["bootstrap"]
    assert make_targets_named_in("make run PATTERN=<name>") == ["run"]
    assert make_targets_named_in("make clean && make up") == ["clean", "up"]
    assert make_targets_named_in("kubectl --kubeconfig $(make -s kubeconfig) get pods") == ["kubeconfig"]
    assert make_targets_named_in("make deploy [STACK=dev|prod]") == ["deploy"]
    assert make_targets_named_in("ANSIBLE_STRATEGY=linear make up") == ["up"]
    assert make_targets_named_in("make -k") == []


@pytest.mark.parametrize("doc", DOC_FILES, ids=DOC_IDS)
def test_every_make_target_the_docs_name_is_in_the_makefile(doc: Path):
    defined = makefile_targets()
    named = {target for snippet in code_snippets(doc.read_text()) for target in make_targets_named_in(snippet)}
    unknown = sorted(named - defined)
    assert not unknown, f"{doc.relative_to(ROOT)} names make targets the Makefile does not define: {unknown}"


def test_the_docs_name_make_targets_at_all():
    named = {target for doc in DOC_FILES for snippet in code_snippets(doc.read_text())
             for target in make_targets_named_in(snippet)}
    assert {"demo", "test", "up", "deploy", "kube-up", "hosts-up", "bench"} <= named


# --- the ports of the local cluster ---------------------------------------------------

PORTS_HEADING = "## Ports of the local cluster"


def local_inventory_group(name: str) -> list[str]:
    """The hosts of a group of the local inventory, in its order (a node added there
    shows in the table's rows, with nothing to change here)."""
    children = yaml.safe_load((LOCAL_INVENTORY / "hosts.yml").read_text())["all"]["children"]
    return list((children.get(name) or {}).get("hosts") or {})


def local_inventory_host_vars() -> dict[str, dict]:
    """Each host of the local inventory with the variables hosts.yml gives it."""
    hosts: dict[str, dict] = {}

    def walk(group: dict) -> None:
        for host, host_vars in (group.get("hosts") or {}).items():
            hosts.setdefault(host, {}).update(host_vars or {})
        for child in (group.get("children") or {}).values():
            walk(child or {})

    walk(yaml.safe_load((LOCAL_INVENTORY / "hosts.yml").read_text())["all"])
    return hosts


def local_inventory_group_vars() -> dict:
    return yaml.safe_load((LOCAL_INVENTORY / "group_vars" / "all.yml").read_text())


def role_defaults(role: str) -> dict:
    return yaml.safe_load((role_dir(role) / "defaults" / "main.yml").read_text())


def port_sources() -> dict[str, list[int]]:
    """For each row of the ports table (found by a part of its first cell), the ports it must
    show, in order, read from where they are set."""
    hosts = local_inventory_host_vars()
    kube_node = role_defaults("kube_node")

    def per_kafka_node(variable: str, group: str = "kafka_brokers") -> list[int]:
        return [hosts[node][variable] for node in local_inventory_group(group)]

    connect_metrics_port = hosts["connect-1"].get("connect_metrics_port",
                                                  role_defaults("kafka_connect")["connect_metrics_port"])
    return {
        "CLIENT (SASL_SSL)": per_kafka_node("kafka_broker_port"),
        "REPLICATION (mutual TLS)": per_kafka_node("kafka_replication_port"),
        "CONTROLLER (mutual TLS": per_kafka_node("kafka_controller_port", "kafka_controllers"),
        "kafka-3 Prometheus metrics": per_kafka_node("kafka_metrics_port"),
        "Kafka Connect REST": [hosts["connect-1"]["connect_rest_port"]],
        "Kafka Connect Prometheus metrics": [connect_metrics_port],
        "Prometheus (scrapes": [hosts["monitoring-1"]["prometheus_port"]],
        "the delivery canary / the consumer-group lag exporter": [
            hosts["monitoring-1"]["canary_metrics_port"], hosts["monitoring-1"]["lag_exporter_metrics_port"]],
        "PostgreSQL (db": [hosts["postgres-1"]["postgresql_port"]],
        "schema registry (Apicurio": [hosts["registry-1"]["registry_port"]],
        "its management interface": [hosts["registry-1"]["registry_management_port"]],
        "for pods of the local Kubernetes: Kafka": per_kafka_node("kafka_pods_port"),
        "for pods: PostgreSQL": [hosts["postgres-1"]["postgresql_port"]],
        "local Kubernetes API server": [kube_node["kube_node_apiserver_port"]],
        "its etcd, controller manager, scheduler, kubelet health, kube-proxy": [
            kube_node[f"kube_node_{name}_port"] for name in
            ("etcd_client", "controller_manager", "scheduler", "kubelet_healthz", "proxy_metrics", "proxy_healthz")],
    }


def table_cells(row: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def ports_table() -> list[tuple[str, str]]:
    """(part, address) of each row of the one ports table in the docs."""
    found = [doc for doc in DOC_FILES if PORTS_HEADING in doc.read_text().splitlines()]
    assert len(found) == 1, f"expected one {PORTS_HEADING!r} section in the docs, found it in {found}"
    section = found[0].read_text().split(PORTS_HEADING + "\n", 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(table_cells(line))
        elif rows:
            break
    assert rows[0] == ["part", "address"], rows[0]
    return [(part, address) for part, address in rows[2:]]


def ports_in(address: str) -> list[int]:
    return [int(port) for port in re.findall(r"(?<![\d.])\d{4,5}(?![\d.])", address)]


def test_the_ports_table_shows_the_ports_the_inventory_and_role_defaults_set():
    sources = port_sources()
    table = ports_table()
    assert len(table) >= len(sources)
    for part, address in table:
        matching = [key for key in sources if key in part]
        assert len(matching) == 1, (f"ports table row {part!r}: no one known source of its ports "
                                    f"(add it to port_sources in {Path(__file__).name}); matches: {matching}")
        assert ports_in(address) == sources[matching[0]], (
            f"ports table row {part!r} shows {ports_in(address)}, the inventory or role defaults set "
            f"{sources[matching[0]]}")
    rows_per_source = {key: sum(key in part for part, _ in table) for key in sources}
    assert all(rows_per_source.values()), f"rows missing from the ports table: {rows_per_source}"


def test_the_ports_table_shows_the_inventorys_addresses():
    group_vars = local_inventory_group_vars()
    addresses = {group_vars["ansible_host"], group_vars["host_bridge_cidr"].split("/")[0]}
    shown = {ip for _, address in ports_table() for ip in re.findall(r"\d+\.\d+\.\d+\.\d+", address)}
    assert shown <= addresses, f"addresses in the ports table not in the local inventory: {shown - addresses}"


def test_every_port_in_the_table_lies_below_the_nodeports():
    ports = [port for _, address in ports_table() for port in ports_in(address)]
    assert ports and max(ports) < 30000


# --- relative links ---------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    dashes, a repeated one suffixed -1, -2, ..."""
    anchors: set[str] = set()
    for heading in HEADING.findall(without_code_blocks(markdown)):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        candidate, n = anchor, 0
        while candidate in anchors:
            n += 1
            candidate = f"{anchor}-{n}"
        anchors.add(candidate)
    return anchors


def relative_links(doc: Path) -> list[str]:
    prose = INLINE_CODE.sub("code", without_code_blocks(doc.read_text()))
    return [target for target in LINK.findall(prose) if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target)]


def test_the_anchor_rule_matches_githubs():
    assert github_anchors("## make up's stages\n### `STACK=local`: two releases\n## A\n## A\n") == {
        "make-ups-stages", "stacklocal-two-releases", "a", "a-1"}


@pytest.mark.parametrize("doc", DOC_FILES, ids=DOC_IDS)
def test_every_relative_link_points_at_a_file_and_heading_that_exist(doc: Path):
    broken = []
    for target in relative_links(doc):
        path_part, _, anchor = target.partition("#")
        linked = (doc.parent / path_part).resolve() if path_part else doc
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in github_anchors(linked.read_text()):
            broken.append(f"{target} (no such heading in {linked.relative_to(ROOT)})")
    assert not broken, f"{doc.relative_to(ROOT)} has broken links: {broken}"

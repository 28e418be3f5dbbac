"""The test hosts of `make hosts-up` (role netns_hosts) are inventories/example-hosts'
topology: the same hosts in the same groups, with the same Kafka node ids and racks, so
that the hosts tier tests the shape a user copies. The two lists are written apart (one
holds a user's addresses, the other this machine's); this holds them together. The only
hosts of the example the test hosts leave out are the ones named here, each for a reason
the role's defaults give."""

from __future__ import annotations

import yaml

from helpers import ROOT, role_dir

EXAMPLE = yaml.safe_load((ROOT / "ansible" / "inventories" / "example-hosts" / "hosts.yml").read_text())
ROLE = role_dir("netns_hosts")
TEST_HOSTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["netns_hosts_list"]
TEST_GROUPS = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["netns_hosts_groups"]
# connect-2: a second worker is optional (one runs the connectors; the defaults say how
# to add it); registry-1: the hosts topology runs no schema registry (the jobs' schema
# checks are tested on the local default and on Kubernetes).
LEFT_OUT = {"connect-2", "registry-1"}


def example_hosts(group: str) -> dict[str, dict]:
    return EXAMPLE["all"]["children"][group]["hosts"] or {}


def test_every_test_host_group_is_a_group_of_the_example() -> None:
    assert set(TEST_GROUPS) <= set(EXAMPLE["all"]["children"])
    assert {h["group"] for h in TEST_HOSTS} == set(TEST_GROUPS)


def test_the_test_hosts_are_the_examples_with_their_node_ids_and_racks() -> None:
    for group in TEST_GROUPS:
        example = {name: (h.get("kafka_node_id"), h.get("kafka_rack")) for name, h in example_hosts(group).items()
                   if name not in LEFT_OUT}
        ours = {h["name"]: (h.get("node_id"), h.get("rack")) for h in TEST_HOSTS if h["group"] == group}
        assert ours == example, group


def test_only_the_named_hosts_of_the_example_are_left_out() -> None:
    built = {h["name"] for h in TEST_HOSTS}
    example = {name for group, g in EXAMPLE["all"]["children"].items() if group != "monitoring"
               for name in (g.get("hosts") or {})}
    assert example - built == LEFT_OUT
    assert built <= example

"""make up runs site.yml's playbooks in stages (SITE_STAGES in the Makefile): the stages
name each of site.yml's playbooks once, in an order site.yml also has, so the staged
run sets up the same platform as `ansible-playbook site.yml`."""

from __future__ import annotations

import re

import yaml

from helpers import ROOT


def test_the_stages_are_site_yml_s_playbooks_each_once_in_its_order():
    makefile = (ROOT / "Makefile").read_text()
    stages = re.search(r"^SITE_STAGES := (.+)$", makefile, re.MULTILINE).group(1)
    staged = [name for stage in stages.split("|") for name in stage.split()]
    site = yaml.safe_load((ROOT / "ansible" / "playbooks" / "site.yml").read_text())
    imported = [play["ansible.builtin.import_playbook"].removesuffix(".yml") for play in site]
    assert staged == imported

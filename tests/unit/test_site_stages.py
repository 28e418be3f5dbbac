"""make up runs site.yml's playbooks in stages (platform_cli.lifecycle.SITE_STAGES): the
stages name each of site.yml's playbooks once, in an order site.yml also has, so the
staged run sets up the same platform as `ansible-playbook site.yml`."""

from __future__ import annotations

import yaml

from helpers import ROOT
from platform_cli import lifecycle


def test_the_stages_are_site_yml_s_playbooks_each_once_in_its_order():
    staged = [name for stage in lifecycle.SITE_STAGES for name in stage]
    site = yaml.safe_load((ROOT / "ansible" / "playbooks" / "site.yml").read_text())
    imported = [play["ansible.builtin.import_playbook"].removesuffix(".yml") for play in site]
    assert staged == imported


def test_each_stage_s_playbook_exists():
    missing = [name for stage in lifecycle.SITE_STAGES for name in stage
               if not (lifecycle.PLAYBOOKS / f"{name}.yml").is_file()]
    assert missing == []

"""`make up`'s shortcut (platform_cli.up_to_date): the playbook is skipped only with
the inputs of the last successful run and every endpoint answering."""

from __future__ import annotations

import pytest

from platform_cli import up_to_date


@pytest.fixture
def inventory(tmp_path, monkeypatch):
    inv = tmp_path / "inventory"
    inv.mkdir()
    (inv / "hosts.yml").write_text("all: {}\n")
    monkeypatch.setenv("PLATFORM_INVENTORY", str(inv))
    monkeypatch.setattr(up_to_date, "STAMP", tmp_path / "up.inputs")
    monkeypatch.setattr(up_to_date, "not_listening", lambda: [])
    monkeypatch.setattr(up_to_date.inventory, "load", lambda: type("C", (), {"endpoints": lambda self: [1, 2]})())
    return inv


def test_without_a_stamp_the_playbook_runs(inventory):
    assert up_to_date.check() == 1


def test_the_same_inputs_and_everything_answering_skip_the_playbook(inventory, capsys):
    up_to_date.stamp()
    assert up_to_date.check() == 0
    assert "nothing changed" in capsys.readouterr().out


def test_a_changed_inventory_runs_the_playbook(inventory, capsys):
    up_to_date.stamp()
    (inventory / "hosts.yml").write_text("all: {vars: {kafka_heap: 2g}}\n")
    assert up_to_date.check() == 1
    assert "changed since the last run" in capsys.readouterr().out


def test_a_part_not_listening_runs_the_playbook(inventory, monkeypatch, capsys):
    up_to_date.stamp()
    monkeypatch.setattr(up_to_date, "not_listening", lambda: ["kafka-2 broker (127.0.0.1:9093)"])
    assert up_to_date.check() == 1
    assert "not listening: kafka-2 broker" in capsys.readouterr().out


def test_the_inputs_are_the_ansible_tree_the_declarations_and_the_inventory(inventory):
    files = {str(p) for p in up_to_date.input_files(inventory)}
    root = up_to_date.ROOT
    assert str(root / "catalogue" / "versions.yml") in files
    assert str(root / "ansible" / "roles" / "platform" / "kafka_node" / "tasks" / "main.yml") in files
    assert str(root / "catalogue" / "catalogue.yaml") in files
    assert str(root / "catalogue" / "schemas" / "reading" / "v1.json") in files
    assert str(inventory / "hosts.yml") in files
    assert not any("__pycache__" in f for f in files)


def test_forget_drops_the_stamp(inventory):
    up_to_date.stamp()
    up_to_date.forget()
    assert up_to_date.check() == 1

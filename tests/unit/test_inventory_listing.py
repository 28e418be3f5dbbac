"""A job process takes its parent's inventory listing instead of running ansible-inventory
again, but only a listing of the inventory it would read itself."""

from pathlib import Path

import pytest

from kafka_patterns.config import inventory


@pytest.fixture(autouse=True)
def _fresh_listing_cache():
    inventory.listing.cache_clear()
    yield
    inventory.listing.cache_clear()  # no fake listing left for the next test


def _tool_runs(monkeypatch) -> list[list[str]]:
    calls = []

    class Done:
        stdout = '{"_meta": {"hostvars": {}}}'

    def run(cmd, **_):
        calls.append(cmd)
        return Done()

    monkeypatch.setattr(inventory.subprocess, "run", run)
    return calls


def test_a_child_takes_the_listing_its_parent_read_of_the_same_inventory(monkeypatch):
    calls = _tool_runs(monkeypatch)
    monkeypatch.setenv(inventory.LISTING_ENV, "/inv/local\n{\"from\": \"parent\"}")
    assert inventory.listing(Path("/inv/local")) == '{"from": "parent"}'
    assert calls == []


def test_a_listing_of_another_inventory_is_not_taken(monkeypatch):
    calls = _tool_runs(monkeypatch)
    monkeypatch.setenv(inventory.LISTING_ENV, "/inv/hosts\n{\"from\": \"parent\"}")
    assert inventory.listing(Path("/inv/local")) == '{"_meta": {"hostvars": {}}}'
    assert [c[-2:] for c in calls] == [["/inv/local", "--list"]]


def test_listing_env_hands_down_what_this_process_read(monkeypatch):
    calls = _tool_runs(monkeypatch)
    monkeypatch.delenv(inventory.LISTING_ENV, raising=False)
    monkeypatch.setenv("PLATFORM_INVENTORY", "/inv/local")
    env = inventory.listing_env()
    assert env == {inventory.LISTING_ENV: '/inv/local\n{"_meta": {"hostvars": {}}}'}
    inventory.listing_env()
    assert len(calls) == 1, "read once per process"

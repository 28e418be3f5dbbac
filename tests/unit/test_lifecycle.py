"""make up, hosts-up and hosts-down (platform_cli.lifecycle), with the playbook runner
replaced by a recorder: which playbooks run, on which inventory, and what a failure or
an up-to-date cluster does to the rest."""

from __future__ import annotations

import pytest

from platform_cli import lifecycle


class Recorder:
    """steps.run, recording each run's playbooks and inventory; failing by playbook name."""

    def __init__(self, monkeypatch, failing: set[str] = frozenset()):
        self.failing, self.runs = set(failing), []
        monkeypatch.setattr(lifecycle.steps, "run", self.run)

    def run(self, stages, log, title, verbose=False, append=False) -> int:
        names = [name for stage in stages for name, _ in stage]
        inventories = {cmd[cmd.index("-i") + 1] for stage in stages for _, cmd in stage}
        limits = [cmd[cmd.index("--limit") + 1] for stage in stages for _, cmd in stage if "--limit" in cmd]
        self.runs.append({"names": names, "inventory": inventories.pop(), "limit": limits, "append": append,
                          "log": log.name})
        return 2 if self.failing & set(names) else 0


@pytest.fixture
def stamps(monkeypatch):
    calls = []
    monkeypatch.setattr(lifecycle.up_to_date, "forget", lambda: calls.append("forget") or 0)
    monkeypatch.setattr(lifecycle.up_to_date, "stamp", lambda: calls.append("stamp") or 0)
    return calls


def test_up_skips_the_playbooks_when_up_to_date(monkeypatch, stamps) -> None:
    monkeypatch.setattr(lifecycle.up_to_date, "check", lambda: 0)
    recorder = Recorder(monkeypatch)
    assert lifecycle.main(["up"]) == 0
    assert recorder.runs == [] and stamps == []


def test_up_with_force_runs_site_s_stages_and_stamps(monkeypatch, stamps) -> None:
    monkeypatch.setattr(lifecycle.up_to_date, "check", lambda: 0)
    recorder = Recorder(monkeypatch)
    assert lifecycle.main(["up", "--force"]) == 0
    assert recorder.runs[0]["names"] == [name for stage in lifecycle.SITE_STAGES for name in stage]
    assert stamps == ["forget", "stamp"]


def test_a_failed_up_leaves_no_stamp(monkeypatch, stamps) -> None:
    monkeypatch.setattr(lifecycle.up_to_date, "check", lambda: 1)
    Recorder(monkeypatch, failing={"kafka"})
    assert lifecycle.main(["up"]) == 2
    assert stamps == ["forget"], "the next make up must run the playbooks again"


def test_hosts_up_makes_the_hosts_then_runs_site_over_ssh(monkeypatch) -> None:
    recorder = Recorder(monkeypatch)
    assert lifecycle.main(["hosts-up"]) == 0
    made, site = recorder.runs
    assert made["names"] == ["hosts-up"] and made["inventory"] != str(lifecycle.environments.HOSTS_INVENTORY)
    assert site["inventory"] == str(lifecycle.environments.HOSTS_INVENTORY) and site["append"]


def test_hosts_up_stops_when_the_hosts_could_not_be_made(monkeypatch) -> None:
    recorder = Recorder(monkeypatch, failing={"hosts-up"})
    assert lifecycle.main(["hosts-up"]) == 2
    assert len(recorder.runs) == 1


@pytest.mark.parametrize(("reachable", "inventory", "first"), [
    (True, True, {"names": ["stop"], "limit": []}),
    (False, True, {"names": ["stop"], "limit": ["monitoring"]}),
    (False, False, None),
])
def test_hosts_down_stops_what_it_can_reach_then_deletes_the_hosts(monkeypatch, tmp_path, reachable, inventory,
                                                                     first) -> None:
    hosts = tmp_path / "inventory"
    if inventory:
        hosts.mkdir()
        (hosts / "hosts.yml").write_text("all: {}\n")
    monkeypatch.setattr(lifecycle.environments, "HOSTS_INVENTORY", hosts)
    monkeypatch.setattr(lifecycle.environments, "hosts_are_up", lambda: reachable)
    recorder = Recorder(monkeypatch, failing={"stop"})  # a failed stop does not keep the hosts
    assert lifecycle.main(["hosts-down"]) == 0
    *stops, deletion = recorder.runs
    assert [{"names": s["names"], "limit": s["limit"]} for s in stops] == ([first] if first else [])
    assert all(s["inventory"] == str(hosts) for s in stops)
    assert deletion["names"] == ["hosts-down"] and deletion["inventory"] != str(hosts)

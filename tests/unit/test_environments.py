"""The start-if-down rule (platform_cli.environments) and the tiers built on it
(platform_cli.tiers), with make and pytest replaced by recorders: what is started, run
and stopped, in which order, and what a failure does to the rest."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace

import pytest

from platform_cli import environments, tiers


class FakeEnvironments:
    """Environments whose state is a flag, and a make that flips it and records."""

    def __init__(self, monkeypatch, up: set[str] = frozenset(), failing: set[str] = frozenset()):
        self.up, self.failing, self.calls = set(up), set(failing), []
        fakes = {}
        for name, env in environments.ENVIRONMENTS.items():
            fakes[name] = replace(env, is_up=lambda n=name: n in self.up, is_present=lambda n=name: n in self.up)
        self.targets = {env.up_target: (name, True) for name, env in fakes.items()}
        self.targets |= {env.down_target: (name, False) for name, env in fakes.items()}
        monkeypatch.setattr(environments, "ENVIRONMENTS", fakes)
        monkeypatch.setattr(environments, "make", self.make)

    def make(self, *targets: str) -> int:
        self.calls.append(" ".join(targets))
        if targets[0] in self.failing:
            return 2
        if targets[0] in self.targets:
            name, up = self.targets[targets[0]]
            (self.up.add if up else self.up.discard)(name)
        return 0


@pytest.mark.parametrize("outer", [None, "yes"])
def test_a_down_environment_is_started_and_stopped_after(monkeypatch, outer) -> None:
    # outer: what an enclosing run set (make test runs the unit tier inside its own).
    if outer is None:
        monkeypatch.delenv("KP_CLUSTER_STARTED_BY_TEST", raising=False)
    else:
        monkeypatch.setenv("KP_CLUSTER_STARTED_BY_TEST", outer)
    fake = FakeEnvironments(monkeypatch)
    with environments.running("cluster") as started:
        assert started and fake.up == {"cluster"}
        assert os.environ["KP_CLUSTER_STARTED_BY_TEST"] == "yes"
    assert fake.calls == ["up", "down"]
    assert os.environ.get("KP_CLUSTER_STARTED_BY_TEST") == outer, "the enclosing value is restored"


def test_an_environment_that_was_up_is_left_up(monkeypatch) -> None:
    monkeypatch.setenv("KP_HOSTS_STARTED_BY_TEST", "yes")
    fake = FakeEnvironments(monkeypatch, up={"hosts"})
    with environments.running("hosts") as started:
        assert not started and os.environ["KP_HOSTS_STARTED_BY_TEST"] == "no"
    assert fake.calls == [] and fake.up == {"hosts"}
    assert os.environ["KP_HOSTS_STARTED_BY_TEST"] == "yes", "the enclosing value is restored"


def test_keep_leaves_what_it_started_running(monkeypatch) -> None:
    fake = FakeEnvironments(monkeypatch)
    with environments.running("cluster", keep=True):
        pass
    assert fake.calls == ["up"] and fake.up == {"cluster"}


def test_nothing_is_stopped_when_the_command_took_it_down_itself(monkeypatch) -> None:
    fake = FakeEnvironments(monkeypatch)
    with environments.running("hosts"):
        fake.up.clear()  # tests/hosts' last test takes the hosts down
    assert fake.calls == ["hosts-up"]


def test_it_is_stopped_after_a_failing_command_too(monkeypatch) -> None:
    fake = FakeEnvironments(monkeypatch)
    with pytest.raises(RuntimeError), environments.running("kube"):
        raise RuntimeError("the tests broke")
    assert fake.calls == ["kube-up", "kube-down"]


def test_a_failed_start_names_the_target_and_runs_nothing(monkeypatch, capsys) -> None:
    fake = FakeEnvironments(monkeypatch, failing={"up"})
    assert environments.run_in(["cluster"], [sys.executable, "-c", "raise SystemExit(7)"]) == 1
    assert "make up failed" in capsys.readouterr().err
    assert fake.calls == ["up"]


def test_several_are_started_in_order_and_stopped_in_reverse(monkeypatch) -> None:
    fake = FakeEnvironments(monkeypatch)
    assert environments.run_in(["cluster", "kube"], [sys.executable, "-c", "raise SystemExit(7)"]) == 7
    assert fake.calls == ["up", "kube-up", "kube-down", "down"]


def test_an_unknown_environment_is_refused_with_the_known_ones(capsys) -> None:
    with pytest.raises(SystemExit):
        environments.main(["cluser", "--", "true"])
    assert "unknown environment cluser: one of cluster, kube, hosts" in capsys.readouterr().err


# --- tiers --------------------------------------------------------------------------


@pytest.fixture
def recorded_tiers(monkeypatch, tmp_path):
    """Every tier's steps replaced by recorders that pass unless named in `failing`."""
    monkeypatch.setattr(tiers, "LOGS", tmp_path)
    monkeypatch.setattr(tiers, "RUN_LOG", tmp_path / "test-run.log")
    monkeypatch.setattr(tiers, "TIERS_LOG", tmp_path / "test-tiers.log")
    monkeypatch.setattr(tiers, "FAILED_LOG", tmp_path / "failed-tests.log")
    ran: list[str] = []
    failing: set[str] = set()

    def recorder(label: str):
        def step(_extra) -> int:
            ran.append(label)
            return 1 if label in failing else 0
        return step

    fakes = {}
    for name, tier in tiers.TIERS.items():
        labels = [f"{name}/{label}" for label, _ in tier.steps()]
        fakes[name] = replace(tier, steps=lambda labels=labels: [(lb, recorder(lb)) for lb in labels])
    monkeypatch.setattr(tiers, "TIERS", fakes)
    # The side-by-side tiers run in child processes: here in this one, one after the other.
    monkeypatch.setattr(tiers, "run_side_by_side", lambda names: all([tiers.run_tier(n).passed for n in names]))
    return ran, failing


def test_all_runs_every_tier_in_order_around_one_start_of_the_cluster(monkeypatch, recorded_tiers) -> None:
    ran, _ = recorded_tiers
    fake = FakeEnvironments(monkeypatch)
    assert tiers.run_all()
    assert ran == ["iac/iac", "unit/unit", "infra/infra", "security/security", "integration/integration",
                   "faults/matrix", "faults/nodes", "kube/image", "kube/deploy", "kube/tests",
                   "hosts-chaos/chaos", "hosts-chaos/hosts"]
    # The cluster once around its tiers, the local Kubernetes around its tier, and the
    # cluster stopped before the hosts come up.
    assert fake.calls == ["up", "kube-up", "kube-down", "down", "hosts-up", "hosts-down"]


def test_a_failing_tier_fails_the_run_and_the_others_still_run(monkeypatch, recorded_tiers) -> None:
    ran, failing = recorded_tiers
    FakeEnvironments(monkeypatch)
    failing.add("security/security")
    assert not tiers.run_all()
    assert "hosts-chaos/hosts" in ran
    assert "==> test-security FAILED" in tiers.RUN_LOG.read_text()
    assert "==> test-integration passed" in tiers.RUN_LOG.read_text()


def test_a_chained_tier_stops_at_its_first_failing_step(monkeypatch, recorded_tiers) -> None:
    ran, failing = recorded_tiers
    FakeEnvironments(monkeypatch, up={"cluster", "kube"})
    failing.add("kube/image")
    assert not tiers.run_tier("kube").passed
    assert ran == ["kube/image"]


def test_a_tier_of_independent_steps_runs_them_all(monkeypatch, recorded_tiers) -> None:
    ran, failing = recorded_tiers
    FakeEnvironments(monkeypatch, up={"cluster"})
    failing.add("faults/matrix")
    assert not tiers.run_tier("faults").passed
    assert ran == ["faults/matrix", "faults/nodes"]


def test_when_the_cluster_does_not_start_its_tiers_fail_and_the_hosts_still_run(monkeypatch, recorded_tiers) -> None:
    ran, _ = recorded_tiers
    FakeEnvironments(monkeypatch, failing={"up"})
    assert not tiers.run_all()
    assert ran == ["hosts-chaos/chaos", "hosts-chaos/hosts"]
    assert "the tiers on it did not run" in tiers.RUN_LOG.read_text()


def test_every_tier_has_its_make_target() -> None:
    makefile = (tiers.ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z0-9-]+): setup\b[^#\n]*##", makefile, re.MULTILINE))
    missing = [t.target for t in tiers.TIERS.values() if t.target not in targets]
    assert not missing, f"tiers without a make target: {missing}"

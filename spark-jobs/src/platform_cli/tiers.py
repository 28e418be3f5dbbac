"""The test tiers behind `make test` and `make test-<tier>`: what each runs and what it
needs running, in one table.

    python -m platform_cli.tiers unit                  # one tier (make test-unit)
    python -m platform_cli.tiers integration -- -k cdc # extra pytest arguments
    python -m platform_cli.tiers all                   # every tier (make test)

A tier that needs an environment (platform_cli.environments) starts it when it is down
and stops it afterwards when it started it. `all` runs every tier even when one fails
(like make -k), each with its time. With the local cluster up: iac and unit side by
side, each into its own log (each keeps about one of the two cores busy: 96 and 111 s
one after the other, 115 s together), then the tiers on the cluster; then, with the
local cluster stopped when this run started it (leaving the hosts topology the machine),
the hosts tier. The summary (.run/logs/test-run.log) and the failed tests
(.run/logs/failed-tests.log, written by tests/conftest.py) come last.

Settings from the environment (make passes its command line's): TEST_WORKERS (3: the
integration and fault-matrix tests side by side), CHAOS_RUNS (4 per fault scenario in
the chaos tier), PLATFORM_INVENTORY (the local cluster's Ansible inventory: make's INVENTORY).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_patterns.config import inventory
from kafka_patterns.config.catalogue import ROOT
from platform_cli import environments

LOGS = ROOT / ".run" / "logs"
TIERS_LOG = LOGS / "test-tiers.log"  # every tier's result, across runs
RUN_LOG = LOGS / "test-run.log"  # this `make test`'s summary
FAILED_LOG = LOGS / "failed-tests.log"
TESTS = ROOT / "tests"
HELM = ROOT / ".cache" / "bin" / "helm"


def setting(name: str, default: str) -> str:
    return os.environ.get(name) or default


def pytest(*args: str | Path, env: dict[str, str] | None = None) -> Callable[[Sequence[str]], int]:
    """A step: pytest on `args` (and the tier's extra arguments), with `env` added."""
    def run(extra: Sequence[str]) -> int:
        argv = [sys.executable, "-m", "pytest", "-c", str(TESTS / "pytest.ini"), "--rootdir", str(ROOT),
                *map(str, args), *extra]
        return subprocess.run(argv, env={**os.environ, **(env or {})}, check=False).returncode
    return run


def make(*targets: str) -> Callable[[Sequence[str]], int]:
    def run(_extra: Sequence[str]) -> int:
        return environments.make(*targets)
    return run


@dataclass(frozen=True)
class Tier:
    name: str
    steps: Callable[[], list[tuple[str, Callable[[Sequence[str]], int]]]]
    needs: tuple[str, ...] = ()
    # True: stop at the first failing step (it prepares the next); False: run them all.
    chained: bool = False
    # Print each step's time on one line, into the run's summary too.
    timed_steps: bool = False

    @property
    def target(self) -> str:
        return f"test-{self.name}"


def _workers() -> list[str]:
    return ["-n", setting("TEST_WORKERS", "3"), "--dist", "loadgroup"]


def _local_inventory() -> str:
    return str(inventory.inventory_path())


def _chaos(runs: str, *args: str) -> Callable[[Sequence[str]], int]:
    return pytest(TESTS / "chaos", *args,
                  env={"CHAOS_RUNS": runs, "PLATFORM_INVENTORY": str(environments.HOSTS_INVENTORY)})


def _hosts(*args: str) -> Callable[[Sequence[str]], int]:
    return pytest(TESTS / "hosts", f"--ansible-inventory={environments.HOSTS_INVENTORY}", *args)


MATRIX = TESTS / "faults" / "test_fault_matrix.py"

TIERS = {t.name: t for t in [
    Tier("unit",
         lambda: [("unit", pytest(TESTS / "unit"))]),
    Tier("iac",
         lambda: [("iac", pytest(TESTS / "iac", env={"HELM": str(HELM)}))]),
    Tier("infra",
         lambda: [("infra", pytest(TESTS / "infra", f"--ansible-inventory={_local_inventory()}"))],
         needs=("cluster",)),
    Tier("security",
         lambda: [("security", pytest(TESTS / "security"))], needs=("cluster",)),
    # Side by side (pytest-xdist): most of a test's time is waiting on a producer's rate,
    # a job process's start or a window closing. Tests that share state are in one
    # xdist_group, which runs on one worker.
    Tier("integration",
         lambda: [("integration", pytest(TESTS / "integration", *_workers()))], needs=("cluster",)),
    # The fault matrix kills job processes only: its cases run side by side. The other
    # faults stop, wipe or hang Kafka nodes, so they run after it, one at a time.
    Tier("faults",
         lambda: [("matrix", pytest(MATRIX, *_workers())),
                  ("nodes", pytest(TESTS / "faults", f"--ignore={MATRIX}"))], needs=("cluster",)),
    # The pods use the local cluster's Kafka and PostgreSQL.
    Tier("kube",
         lambda: [("image", make("image")), ("deploy", make("deploy", "STACK=local")),
                  ("tests", pytest(TESTS / "kube", TESTS / "iac" / "live",
                                   env={"KUBECONFIG": str(environments.KUBECONFIG), "KP_LIVE_STACK": "local"}))],
         needs=("cluster", "kube"), chained=True, timed_steps=True),
    Tier("hosts",
         lambda: [("hosts", _hosts())], needs=("hosts",)),
    # Broker faults judged by Kafka's VerifiableProducer/VerifiableConsumer: each scenario
    # CHAOS_RUNS times (6 scenarios x 4 = 24 runs of at least 100,000 acknowledged records).
    Tier("chaos",
         lambda: [("chaos", _chaos(setting("CHAOS_RUNS", "4")))], needs=("hosts",)),
    # What `make test` runs on the hosts topology, inside CI's time: every fault scenario
    # once but the rolling restart (six nodes one at a time, about 8 minutes: the chaos
    # tier runs it), then tests/hosts but the second site.yml run (about 5 minutes over
    # SSH: the hosts tier runs it; the infra tier proves the same roles idempotent on the
    # local inventory). The last test of tests/hosts takes the hosts down again when this
    # tier started them.
    Tier("hosts-chaos",
         lambda: [("chaos", _chaos("1", "-k", "not rolling")), ("hosts", _hosts("-k", "not second_site_run"))],
         needs=("hosts",)),
]}

# `make test`, with the local cluster up: the tiers side by side (a few unit tests read
# the secrets `make up` writes), then those on the cluster; then the hosts.
SIDE_BY_SIDE = ("iac", "unit")
ON_THE_CLUSTER = ("infra", "security", "integration", "faults", "kube")
AFTER_THE_CLUSTER = ("hosts-chaos",)


def _append(line: str, *logs: Path) -> None:
    print(line, flush=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    for log in logs:
        with log.open("a") as f:
            f.write(line + "\n")


@dataclass
class Result:
    tier: str
    passed: bool
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)


def _run_steps(tier: Tier, extra: Sequence[str], result: Result) -> bool:
    passed = True
    for label, step in tier.steps():
        t0 = time.monotonic()
        ok = step(extra) == 0
        result.steps.append(f"{label} {time.monotonic() - t0:.0f}s")
        passed = passed and ok
        if not ok and tier.chained:
            break
    return passed


def run_tier(name: str, extra: Sequence[str] = ()) -> Result:
    """One tier with what it needs; its result line goes to the tiers' logs."""
    tier, t0 = TIERS[name], time.monotonic()
    result = Result(name, passed=False)
    try:
        with environments.running_all(tier.needs):
            result.passed = _run_steps(tier, extra, result)
    except environments.StartFailed as e:
        print(e, file=sys.stderr, flush=True)
    result.seconds = time.monotonic() - t0
    if tier.timed_steps:
        _append(f"    {tier.target} steps: {', '.join(result.steps)}", RUN_LOG)
    _append(f"==> {tier.target} {'passed' if result.passed else 'FAILED'} in {result.seconds:.0f}s",
            TIERS_LOG, RUN_LOG)
    return result


def run_side_by_side(names: Sequence[str]) -> bool:
    """Each tier in its own process and log (.run/logs/test-<tier>.log), shown once all
    are done."""
    print(f"==> {' '.join(TIERS[n].target for n in names)} side by side (logs: .run/logs/<tier>.log)", flush=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    children = []
    for name in names:
        log = LOGS / f"{TIERS[name].target}.log"
        with log.open("w") as out:
            children.append((log, subprocess.Popen([sys.executable, "-m", "platform_cli.tiers", name],
                                                   stdout=out, stderr=subprocess.STDOUT)))
    passed = all([child.wait() == 0 for _, child in children])
    for log, _ in children:
        sys.stdout.write(log.read_text())
    sys.stdout.flush()
    return passed


def run_all() -> bool:
    LOGS.mkdir(parents=True, exist_ok=True)
    FAILED_LOG.unlink(missing_ok=True)
    RUN_LOG.write_text("")
    try:
        with environments.running("cluster"):
            passed = run_side_by_side(SIDE_BY_SIDE)
            for name in ON_THE_CLUSTER:
                passed = run_tier(name).passed and passed
    except environments.StartFailed as e:
        _append(f"==> {e}: the tiers on it did not run ({', '.join((*SIDE_BY_SIDE, *ON_THE_CLUSTER))})",
                TIERS_LOG, RUN_LOG)
        passed = False
    for name in AFTER_THE_CLUSTER:
        passed = run_tier(name).passed and passed
    print("==> summary")
    print(RUN_LOG.read_text(), end="")
    if FAILED_LOG.is_file() and FAILED_LOG.stat().st_size:
        print("==> failed tests")
        print(FAILED_LOG.read_text(), end="")
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m platform_cli.tiers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tier", choices=[*TIERS, "all"])
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- then arguments for pytest (one tier)")
    args = parser.parse_args(argv)
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    if args.tier == "all":
        if extra:
            parser.error("pytest arguments go with one tier, not all")
        return 0 if run_all() else 1
    return 0 if run_tier(args.tier, extra).passed else 1


if __name__ == "__main__":
    sys.exit(main())

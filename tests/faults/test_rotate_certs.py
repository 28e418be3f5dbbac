"""`make rotate-certs` under load on the running cluster: a new key and certificate of
the project CA for every Kafka node, Connect worker and the registry, the nodes rolled
one at a time, while Kafka's VerifiableProducer writes acks=all with idempotence and the
delivery canary runs. Every endpoint serves a new certificate afterwards (the scenario
checks it); nothing acknowledged is lost or duplicated, and the clients, which trust the
unchanged CA, reconnect on their own (pattern_harness.chaos)."""

from __future__ import annotations

import pytest

from helpers import run_day2_operation

SCENARIO = "rolling certificate rotation (make rotate-certs)"


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_certificate_rotation_loses_nothing_acknowledged():
    result = run_day2_operation(SCENARIO, "the rotation")
    if result.canary is not None:
        assert result.canary["failed"] == 0, f"the canary's sends failed during the rotation: {result.canary}"

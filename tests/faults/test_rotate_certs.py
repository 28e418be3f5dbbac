"""`make rotate-certs` under load on the running cluster: a new key and certificate of
the project CA for every Kafka node, Connect worker and the registry, the nodes rolled
one at a time, while Kafka's VerifiableProducer writes acks=all with idempotence and the
delivery canary runs. Every endpoint serves a new certificate afterwards (the scenario
checks it); nothing acknowledged is lost or duplicated, and the clients, which trust the
unchanged CA, reconnect on their own (pattern_harness.chaos)."""

from __future__ import annotations

import pytest

from pattern_harness import chaos

SCENARIO = "rolling certificate rotation (make rotate-certs)"


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_certificate_rotation_loses_nothing_acknowledged():
    result = chaos.run(SCENARIO, records=30_000)
    print(f"{SCENARIO}: acked {result.acked}, lost {result.lost}, duplicated {result.duplicated}, "
          f"failed sends {result.failed_sends}, longest stall {result.longest_stall_s} s, canary {result.canary}")
    assert result.acked >= 30_000
    assert result.lost == 0, f"{result.lost} acknowledged records lost across the rotation"
    assert result.duplicated == 0, f"{result.duplicated} duplicates despite idempotence"
    if result.canary is not None:
        assert result.canary["acked"] > 0, f"the canary acknowledged nothing during the rotation: {result.canary}"
        assert result.canary["lost"] == 0 and result.canary["duplicated"] == 0, result.canary
        assert result.canary["failed"] == 0, f"the canary's sends failed during the rotation: {result.canary}"

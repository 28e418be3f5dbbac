"""Share-group queue under faults: a share consumer SIGKILLed mid-stream while its
group runs with the shortest record acquisition lock the brokers allow (15 s, their
group.share.min.record.lock.duration.ms), so the records it had acquired and not
acknowledged go back to the survivors within seconds: nothing lost, redeliveries
counted. (The session timeout cannot help here: its broker minimum is 45 s.)"""

import pytest

from kafka_patterns.scenarios import share_queue


@pytest.mark.slow
def test_share_queue_redelivers_a_killed_members_records(cluster):
    outcome = share_queue.run(records=2_000, consumers=4, rate=200, kills=1, lock_ms=15_000)
    d = outcome.delivery
    assert d.acked == 2_000  # the malformed records are extras, rejected by design
    assert d.lost == 0, f"{d.lost} records never accepted after the kill: {outcome.notes}"
    assert any("SIGKILLed" in n for n in outcome.notes), outcome.notes
    assert all(outcome.checks.values()), outcome.checks
    print(f"share-queue kill: {d.duplicated} duplicates (counted, the promise); {outcome.notes}")

"""Foundation guarantee: acks=all + idempotence on an RF-3 topic loses nothing,
duplicates nothing and keeps per-partition (and so per-key) order."""

import pytest

from pattern_harness import smoke


@pytest.mark.slow
def test_10000_records_all_come_back_once_and_in_order(cluster):
    result = smoke.run(records=10_000)
    d = result.delivery
    assert d.acked == 10_000
    assert d.lost == 0, f"{d.lost} acknowledged records never came back"
    assert d.duplicated == 0
    assert d.unacked == 0
    assert d.reordered == 0, "per-key order broken"
    assert result.partition_order_violations == 0
    assert d.received == 10_000

"""share-group queue (KIP-932): 4 share consumers on a 2-partition topic."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import share_queue

pytestmark = one_run_at_a_time("share-queue")


@pytest.mark.slow
def test_share_group_spreads_records_over_more_consumers_than_partitions(cluster):
    outcome = share_queue.run(records=1_500, consumers=4, rate=150)
    d = outcome.delivery
    assert d.acked == 1_500
    assert (d.lost, d.duplicated) == (0, 0), outcome.notes
    assert outcome.checks["more consumers than partitions (2) received records"], outcome.notes
    assert all(outcome.checks.values()), outcome.checks

"""single partition, total order: the sink sees every reading once, in global order."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import total_order

pytestmark = one_run_at_a_time("total-order")


@pytest.mark.slow
def test_one_partition_keeps_global_order(cluster):
    outcome = total_order.run(records=2_000)
    d = outcome.delivery
    assert d.acked == 2_000
    assert (d.lost, d.duplicated, d.reordered) == (0, 0, 0), outcome.failures()

"""sql-stream: the windows a stream defined in SQL writes equal Python's over the same readings."""

import pytest

from helpers import one_run_at_a_time
from pattern_harness.scenarios import sql_stream

pytestmark = one_run_at_a_time("sql-stream")


@pytest.mark.slow
def test_the_sql_windows_equal_pythons_over_the_same_readings(cluster):
    outcome = sql_stream.run(records=1_200)
    d = outcome.delivery
    assert d.acked > 0 and d.lost == 0, outcome.notes
    assert d.unacked == 0, outcome.notes  # no window Python does not close: none open, none of late readings
    assert all(outcome.checks.values()), outcome.checks
    # At-least-once Kafka sink: duplicates are counted (none expected without a fault).
    assert d.received == d.acked + d.duplicated
    assert outcome.verdict == "PASS"

"""content-based filtering: each alert topic holds exactly the readings matching its predicate."""

import pytest

from helpers import one_run_at_a_time
from kafka_patterns.scenarios import content_filter

pytestmark = one_run_at_a_time("content-filter")


@pytest.mark.slow
def test_alert_topics_hold_exactly_the_matching_readings(cluster):
    outcome = content_filter.run(records=2_000)
    d = outcome.delivery
    assert d.acked > 0 and d.lost == 0, outcome.notes
    assert d.reordered == 0
    assert all(outcome.checks.values()), outcome.checks
    # At-least-once Kafka sink: duplicates are counted (none expected without a fault).
    assert d.received == d.acked + d.duplicated
    assert outcome.verdict == "PASS"

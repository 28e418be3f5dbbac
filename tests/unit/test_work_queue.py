"""Pure parts of the work-queue worker: the rows a batch yields and the ownership
bookkeeping that proves each partition had one owner at a time."""

import json
from datetime import UTC, datetime, timedelta

from helpers import FakeMessage as Msg
from helpers import reading
from kafka_patterns.jobs import work_queue as wq

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def t(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def test_work_rows_identify_each_item_and_set_malformed_ones_aside_with_the_reason():
    msgs = [Msg(json.dumps(reading(7, sensor="sensor-02")).encode(), 3, 40), Msg(b"{not json", 3, 41)]
    rows, bad = wq.work_rows("g", "w1", msgs, T0)
    assert rows == [("g", "w1", 3, 40, "sensor-02", 7, T0)]
    assert bad == [(msgs[1], "not JSON")]


def test_a_handover_after_revoke_is_not_an_overlap():
    events = [("w1", "assign", 0, t(0)), ("w1", "revoke", 0, t(5)), ("w2", "assign", 0, t(6))]
    spans = wq.ownership_intervals(events, {}, t(10))
    assert spans == {0: [("w1", t(0), t(5)), ("w2", t(6), t(10))]}
    assert wq.overlapping_owners(spans) == []


def test_two_owners_at_once_are_reported():
    events = [("w1", "assign", 0, t(0)), ("w2", "assign", 0, t(3)), ("w1", "revoke", 0, t(5))]
    bad = wq.overlapping_owners(wq.ownership_intervals(events, {}, t(10)))
    assert len(bad) == 1 and "partition 0" in bad[0]


def test_a_killed_worker_owns_its_partitions_until_its_death_only():
    events = [("w1", "assign", 1, t(0)), ("w2", "assign", 1, t(8))]
    assert wq.overlapping_owners(wq.ownership_intervals(events, {"w1": t(7)}, t(10))) == []
    assert wq.overlapping_owners(wq.ownership_intervals(events, {"w1": t(9)}, t(10))) != []


def test_owners_at_lists_idle_members_and_drops_dead_ones():
    events = [("w1", "assign", 0, t(0)), ("w1", "assign", 1, t(0)), ("w2", "assign", -1, t(0)),
              ("w1", "revoke", 1, t(2)), ("w3", "assign", 1, t(3))]
    assert wq.owners_at(events, {}, t(1)) == {"w1": {0, 1}, "w2": set()}
    assert wq.owners_at(events, {"w2": t(2.5)}, t(4)) == {"w1": {0}, "w3": {1}}

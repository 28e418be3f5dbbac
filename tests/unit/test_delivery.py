from pattern_harness.delivery import account, count_reordered


def test_perfect_delivery_counts_nothing():
    sent = [("a", 0), ("b", 1), ("a", 2)]
    d = account(sent, list(sent))
    assert (d.acked, d.received, d.lost, d.duplicated, d.reordered, d.unacked) == (3, 3, 0, 0, 0, 0)


def test_lost_duplicated_and_unacked_are_counted():
    d = account([("a", 0), ("a", 1), ("b", 2)], [("a", 0), ("a", 0), ("a", 0), ("b", 2), ("c", 9)])
    assert d.lost == 1  # ("a", 1)
    assert d.duplicated == 2
    assert d.unacked == 1  # ("c", 9) arrived but was never acknowledged


def test_reorder_is_per_key_unless_total_order_is_promised():
    received = [("a", 0), ("b", 2), ("b", 1), ("a", 3)]
    assert count_reordered(received, "per-key") == 1
    assert count_reordered([("a", 0), ("b", 2), ("a", 1)], "per-key") == 0
    assert count_reordered([("a", 0), ("b", 2), ("a", 1)], "total") == 1
    assert count_reordered(received, "none") == 0


def test_a_redelivered_record_is_a_duplicate_not_a_reorder():
    received = [("a", 0), ("a", 1), ("a", 0), ("a", 2)]
    assert count_reordered(received, "per-key") == 0
    assert account(received, received).duplicated == 1

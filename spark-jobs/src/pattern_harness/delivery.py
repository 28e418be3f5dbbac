"""Delivery accounting: what was lost, duplicated and reordered between two ends.

Same idea as Kafka's own system tests (kafkatest `validate_delivery`): compare the
set the producer had acknowledged with what the consumer saw. Records are
identified by (key, seq) where seq increases per producer run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

Order = Literal["total", "per-key", "none"]
RecordId = tuple[str, int]


@dataclass(frozen=True)
class Delivery:
    acked: int
    received: int
    lost: int
    duplicated: int
    reordered: int
    # Received but never acknowledged (possible with acks=0 or a failed send that did land).
    unacked: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def count_reordered(received: Sequence[RecordId], order: Order) -> int:
    """Records that arrive after a later record of the same key (or of any key, for
    total order). Exact re-deliveries of an earlier record are duplicates, not reorders."""
    if order == "none":
        return 0
    highest: dict[str, int] = {}
    seen: set[RecordId] = set()
    reordered = 0
    for key, seq in received:
        if (key, seq) in seen:
            continue
        seen.add((key, seq))
        scope = "" if order == "total" else key
        if seq < highest.get(scope, -1):
            reordered += 1
        highest[scope] = max(seq, highest.get(scope, -1))
    return reordered


def account(acked: Iterable[RecordId], received: Sequence[RecordId], order: Order = "per-key") -> Delivery:
    acked_set = set(acked)
    counts = Counter(received)
    return Delivery(
        acked=len(acked_set),
        received=len(received),
        lost=len(acked_set - counts.keys()),
        duplicated=sum(n - 1 for n in counts.values()),
        reordered=count_reordered(received, order),
        unacked=len(counts.keys() - acked_set),
    )


def combine(parts: Sequence[Delivery]) -> Delivery:
    """The sum of several accounts (one per output topic, per group...)."""
    return Delivery(*(sum(getattr(d, f) for d in parts) for f in
                      ("acked", "received", "lost", "duplicated", "reordered", "unacked")))

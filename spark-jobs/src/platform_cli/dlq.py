"""What is in the dead-letter topic, and putting it back after a fix.

    python -m platform_cli.dlq show                 # make dlq
    python -m platform_cli.dlq replay --reason R    # make replay-dlq REASON=R

`show` reads the whole topic and groups the letters by their `reason` header (see
kafka_patterns.runtime.dead_letters), with the jobs that wrote them and where they came from.
`replay` writes the original key, value and headers of every letter with that exact
reason back to its source topic (acks=all, idempotent), with a `replayed.from` header
naming the letter; after a fix the job takes them again (a schema tag among the
headers holds them to their version again), and what is still bad comes back as a new
letter. Runs as the catalogue user `dlq` (read the dead-letter topic, write
the sources it may replay to).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from kafka_patterns.runtime import dead_letters

USER = "dlq"
TOPIC = "weather.deadletter"
# The consumer's group id (librdkafka looks its coordinator up; nothing is joined or committed).
GROUP = "dlq-reader"
REPLAYED_FROM = "replayed.from"


@dataclass(frozen=True)
class Letter:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: dict[str, str]
    carried: tuple[dead_letters.Header, ...] = ()  # the record's own headers (deadletters.carried)

    @property
    def reason(self) -> str:
        return self.headers.get("reason", "(no reason header)")


@dataclass
class Group:
    reason: str
    count: int = 0
    jobs: Counter = field(default_factory=Counter)
    sources: Counter = field(default_factory=Counter)


def _headers(raw: list[tuple[str, bytes | None]] | None) -> dict[str, str]:
    return {k: (v or b"").decode(errors="replace") for k, v in (raw or [])}


def read_all(topic: str = TOPIC, timeout: float = 30.0) -> list[Letter]:
    """Every letter the topic holds now: each partition from its start to its high
    watermark, assigned without a consumer group (nothing is committed)."""
    consumer = Consumer({**kafka.base_config(), "group.id": GROUP, "enable.auto.commit": False,
                         "enable.partition.eof": True})
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        if meta.error is not None:
            raise SystemExit(f"cannot read {topic}: {meta.error.str()}")
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in meta.partitions}
        todo = {p for p, (low, high) in ends.items() if high > low}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in todo])
        letters: list[Letter] = []
        kafka.wait_until(lambda: _drain(consumer, ends, todo, letters), timeout=timeout, interval=0,
                           what=f"the end of {topic}")
        return letters
    finally:
        consumer.close()


def _drain(consumer: Consumer, ends: dict[int, tuple[int, int]], todo: set[int], letters: list[Letter]) -> bool:
    for msg in consumer.consume(1000, timeout=0.5):
        if msg.error() is None:
            letters.append(Letter(msg.partition(), msg.offset(), msg.key(), msg.value(), _headers(msg.headers()),
                                  tuple(dead_letters.carried(msg.headers()))))
            if msg.offset() + 1 >= ends[msg.partition()][1]:
                todo.discard(msg.partition())
        elif msg.partition() is not None and msg.error().code() == KafkaError._PARTITION_EOF:
            todo.discard(msg.partition())
    return not todo


def group(letters: list[Letter]) -> list[Group]:
    """Letters by reason, most frequent first (pure)."""
    groups: dict[str, Group] = defaultdict(lambda: Group(""))
    for letter in letters:
        g = groups[letter.reason]
        g.reason = letter.reason
        g.count += 1
        g.jobs[letter.headers.get("job", "?")] += 1
        g.sources[letter.headers.get("source.topic", "?")] += 1
    return sorted(groups.values(), key=lambda g: (-g.count, g.reason))


def table(groups: list[Group]) -> str:
    from tabulate import tabulate

    rows = [[g.count, g.reason, ", ".join(f"{j} ({n})" for j, n in g.jobs.most_common()),
             ", ".join(f"{s} ({n})" for s, n in g.sources.most_common())] for g in groups]
    return tabulate(rows, ["letters", "reason", "jobs", "source topics"], tablefmt="simple")


def to_replay(letters: list[Letter], reason: str) -> list[Letter]:
    """The letters with `reason`, one per source record: several jobs read the same
    topic (the fan-out subscribers), and each letters a bad record, which goes back
    once. A letter without its source coordinates counts on its own (pure)."""
    chosen: dict[tuple, Letter] = {}
    for x in letters:
        if x.reason == reason:
            h = x.headers
            source = (h.get("source.topic"), h.get("source.partition"), h.get("source.offset"))
            chosen.setdefault(source if None not in source else (x.partition, x.offset), x)
    return list(chosen.values())


def replay_headers(letter: Letter) -> list[dead_letters.Header]:
    """The headers a replayed record goes back with: its own, and `replayed.from` naming
    this letter (in place of an earlier replay's) (pure)."""
    return [*(h for h in letter.carried if h[0] != REPLAYED_FROM),
            (REPLAYED_FROM, f"{TOPIC}/{letter.partition}/{letter.offset}".encode())]


def refuse_truncated(chosen: list[Letter]) -> None:
    """Stop before writing anything when a letter holds only a prefix of its record
    (deadletters.bounded): replayed, it would be another record (pure)."""
    cut = [x for x in chosen if dead_letters.is_truncated(x.headers)]
    if cut:
        where = ", ".join(f"{h.get('source.topic', '?')}/{h.get('source.partition', '?')}/{h.get('source.offset', '?')}"
                          f" ({h.get('original.size', '?')} bytes)" for h in (x.headers for x in cut[:5]))
        raise SystemExit(f"{len(cut)} of the {len(chosen)} letters hold only the first {dead_letters.PREFIX_BYTES} "
                         f"bytes of their record, which was too large to letter whole, and are not replayed: "
                         f"{where}. Read the record at its source offset, while the topic retains it.")


def replay(letters: list[Letter], reason: str) -> int:
    """Write the letters with `reason` back to their source topics, each source record
    once; returns how many."""
    chosen = to_replay(letters, reason)
    unknown = sorted({x.headers.get("source.topic", "") for x in chosen} - set(catalogue.topics()))
    if unknown:
        raise SystemExit(f"letters with reason {reason!r} name source topics outside the catalogue: {unknown}")
    refuse_truncated(chosen)
    producer = kafka.producer()
    errors: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    for x in chosen:
        producer.produce(x.headers["source.topic"], x.value, x.key, on_delivery=delivered,
                         headers=replay_headers(x))
        producer.poll(0)
    remaining = producer.flush(60)
    if errors or remaining:
        raise SystemExit(f"replay incomplete: {len(errors)} refused, {remaining} not acknowledged: {errors[:3]}")
    return len(chosen)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("KP_KAFKA_USER", USER)
    p = argparse.ArgumentParser(prog="python -m platform_cli.dlq", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("show", help="the letters grouped by reason")
    r = sub.add_parser("replay", help="write the letters of one reason back to their source topics")
    r.add_argument("--reason", required=True, help="the exact reason, as `show` prints it")
    a = p.parse_args(argv)
    letters = read_all()
    if a.command == "show":
        print(f"{len(letters)} letters in {TOPIC}" + (f":\n\n{table(group(letters))}" if letters else ""))
        return 0
    reasons = {x.reason for x in letters}
    if a.reason not in reasons:
        print(f"no letter has the reason {a.reason!r}; the reasons are: {sorted(reasons) or 'none'}", file=sys.stderr)
        return 2
    print(f"replayed {replay(letters, a.reason)} letters with the reason {a.reason!r} to their source topics")
    return 0


if __name__ == "__main__":
    sys.exit(main())

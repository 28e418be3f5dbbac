"""What the benchmark measures: the cells (record size, durability mode, partitions,
record count) of each section, full or QUICK."""

from __future__ import annotations

from dataclasses import dataclass

# Batching given to both producers: librdkafka's defaults (the project's producer also
# lingers 5 ms). The Java producer's own default batch.size is 16 KiB, which on this
# host makes it request-bound (several times slower, latency in the hundreds of ms), so
# the comparison would measure batching, not the client.
BATCHING = {"linger.ms": "5", "batch.size": "1000000"}
# Durability modes: (replication factor, producer settings shared by both clients).
MODES = {
    "rf3-acks-all": (3, {"acks": "all", "enable.idempotence": "true", **BATCHING}),
    "rf1-acks-1": (1, {"acks": "1", "enable.idempotence": "false", **BATCHING}),
}
SIZES = (100, 1024)


@dataclass(frozen=True)
class Cell:
    size: int  # bytes per record value
    mode: str  # a MODES key
    partitions: int
    count: int  # records produced by EACH producer (Java, then Python) into the cell's topic

    @property
    def label(self) -> str:
        return f"{self.size}B {self.mode} p{self.partitions} n{self.count:,}"


@dataclass(frozen=True)
class Grid:
    main: tuple[Cell, ...]  # produce + consume: every size x mode
    counts: tuple[Cell, ...]  # growth with record count
    partitions: tuple[Cell, ...]  # growth with partitions
    pipeline_rate: int  # records/s fed to the pipeline jobs
    pipeline_seconds: int  # how long they are fed
    pipeline_burst: int  # records produced at once after that: records/s reaching the sink

    def cells(self) -> list[Cell]:
        """Every distinct cell once, in run order."""
        seen: dict[Cell, None] = {}
        for c in (*self.main, *self.counts, *self.partitions):
            seen.setdefault(c, None)
        return list(seen)


def grid(quick: bool) -> Grid:
    if quick:
        n, p, counts, parts, n_parts = 20_000, 6, (20_000, 100_000), (1, 6), 20_000
        rate, secs, burst = 200, 5, 10_000
    else:
        n, p, counts, parts, n_parts = 200_000, 6, (10_000, 100_000, 1_000_000), (1, 3, 6, 12), 200_000
        rate, secs, burst = 1_000, 30, 50_000
    main = tuple(Cell(s, m, p, n) for s in SIZES for m in MODES)
    return Grid(main=main,
                counts=tuple(Cell(100, "rf3-acks-all", p, c) for c in counts),
                partitions=tuple(Cell(100, "rf3-acks-all", q, n_parts) for q in parts),
                pipeline_rate=rate, pipeline_seconds=secs, pipeline_burst=burst)

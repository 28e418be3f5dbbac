"""What the benchmark measures: the cells (record size, durability mode, partitions,
record count) of each section, full or QUICK."""

from __future__ import annotations

from dataclasses import dataclass

# Durability modes: (replication factor, producer settings shared by both clients).
MODES = {
    "rf3-acks-all": (3, {"acks": "all", "enable.idempotence": "true"}),
    "rf1-acks-1": (1, {"acks": "1", "enable.idempotence": "false"}),
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
        return f"{self.size}B {self.mode} p{self.partitions} n{self.count:g}"


@dataclass(frozen=True)
class Grid:
    main: tuple[Cell, ...]  # produce + consume: every size x mode
    counts: tuple[Cell, ...]  # growth with record count
    partitions: tuple[Cell, ...]  # growth with partitions
    pipeline_rate: int  # records/s fed to the pipeline jobs
    pipeline_seconds: int  # how long they are fed

    def cells(self) -> list[Cell]:
        """Every distinct cell once, in run order."""
        seen: dict[Cell, None] = {}
        for c in (*self.main, *self.counts, *self.partitions):
            seen.setdefault(c, None)
        return list(seen)


def grid(quick: bool) -> Grid:
    if quick:
        n, p, counts, parts, n_parts = 20_000, 6, (10_000, 100_000), (1, 6), 20_000
        rate, secs = 500, 10
    else:
        n, p, counts, parts, n_parts = 200_000, 6, (10_000, 100_000, 1_000_000), (1, 3, 6, 12), 200_000
        rate, secs = 1_000, 45
    main = tuple(Cell(s, m, p, n) for s in SIZES for m in MODES)
    return Grid(main=main,
                counts=tuple(Cell(100, "rf3-acks-all", p, c) for c in counts),
                partitions=tuple(Cell(100, "rf3-acks-all", q, n_parts) for q in parts),
                pipeline_rate=rate, pipeline_seconds=secs)

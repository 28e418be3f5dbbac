"""PNG plots of a results dict: throughput against record count and against partitions
(one line per op/tool), and the main produce/consume figures as bars."""

from __future__ import annotations

from pathlib import Path

from bench.report import find

LINES = (("produce", "java"), ("produce", "python"), ("consume", "java"), ("consume", "python"),
         ("consume", "spark"))


def _growth(plt, results: dict, axis: str, key: str, path: Path, log_x: bool) -> Path | None:
    cells = results["grid"][axis]
    if len(cells) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for op, tool in LINES:
        pts = [(c[key], m["records_per_s"]) for c in cells
               if (m := find(results["measurements"], op, tool, **c)) and m.get("records_per_s")]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", linestyle="-" if op == "produce" else "--",
                    label=f"{op} {tool}")
    if log_x:
        ax.set_xscale("log")
        ax.minorticks_off()
    ax.set_xticks([c[key] for c in cells], [f"{c[key]:,}" for c in cells])
    ax.set_xlabel("records per producer" if key == "count" else "partitions")
    ax.set_ylabel("records/s")
    ax.set_title(f"Throughput vs {'record count' if key == 'count' else 'partitions'} (100 B, RF 3 acks=all)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _main_bars(plt, results: dict, path: Path) -> Path | None:
    cells = results["grid"]["main"]
    if not cells:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / len(LINES)
    for i, (op, tool) in enumerate(LINES):
        ys = [(m or {}).get("records_per_s") or 0 for m in (find(results["measurements"], op, tool, **c)
                                                             for c in cells)]
        ax.bar([x + i * width for x in range(len(cells))], ys, width, label=f"{op} {tool}")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cells))],
                  [f"{c['size']} B\n{c['mode']}" for c in cells], fontsize=8)
    ax.set_ylabel("records/s")
    ax.set_title("Produce and consume throughput")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write(results: dict, directory: Path, stamp: str) -> list[str]:
    """The PNGs written (none, with a note, when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("    matplotlib is not installed (make setup installs it): no plots", flush=True)
        return []
    directory.mkdir(parents=True, exist_ok=True)
    made = [_main_bars(plt, results, directory / f"{stamp}-throughput.png"),
            _growth(plt, results, "counts", "count", directory / f"{stamp}-growth-count.png", True),
            _growth(plt, results, "partitions", "partitions", directory / f"{stamp}-growth-partitions.png", False)]
    return [str(p) for p in made if p]

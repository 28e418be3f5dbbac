"""PNG plots of a results dict: throughput against record count and against partitions
(one line per op/tool), the main produce/consume figures as bars, and the stateless
stages' latency and CPU per record per mode (Spark micro-batch, real-time, Kafka Streams)."""

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


def _stages(plt, results: dict, path: Path) -> Path | None:
    """Per stage, a bar per mode: p50 and p99 latency (log scale) and CPU s per 10^5 records."""
    measured = [r for r in results.get("stages", []) if "failed" not in r]
    if not measured:
        return None
    stages = list(dict.fromkeys(r["stage"] for r in measured))
    modes = list(dict.fromkeys(r["mode"] for r in measured))
    by = {(r["stage"], r["mode"]): r for r in measured}
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    width = 0.8 / len(modes)
    for ax, key, title in zip(axes, ("latency_p50_ms", "latency_p99_ms", "cpu_seconds_per_1e5"),
                              ("p50 latency (ms)", "p99 latency (ms)", "CPU s per 10^5 records"), strict=True):
        for i, mode in enumerate(modes):
            ys = [(by.get((stage, mode)) or {}).get(key) or 0 for stage in stages]
            ax.bar([x + i * width for x in range(len(stages))], ys, width, label=mode)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(stages))], [s.replace(" -> ", "\n-> ") for s in stages],
                      fontsize=8)
        ax.set_title(title)
        if key != "cpu_seconds_per_1e5":
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Stateless stages: Spark micro-batch, real-time mode and Kafka Streams, same run, same input rate")
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
            _growth(plt, results, "partitions", "partitions", directory / f"{stamp}-growth-partitions.png", False),
            _stages(plt, results, directory / f"{stamp}-stages.png")]
    return [str(p) for p in made if p]

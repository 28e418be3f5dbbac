"""What one host allows the produce figures: the disk's synced write bandwidth, measured
in the run where the Kafka nodes keep their data, and the CPU each measurement kept busy.
Replication factor N on one host writes every byte N times to that disk, so a produce
figure's ceiling is the bandwidth / N (the brokers do not fsync each write, so the page
cache may let a short burst beat it; a sustained run cannot)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from bench import stats

PROBE_MIB = 256


def disk_sync_write_mb_s(directory: Path, mib: int = PROBE_MIB) -> float:
    """MiB/s of writing `mib` MiB of incompressible data to a file in `directory` and
    fsyncing it, the file removed afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f".bench-disk-probe-{os.getpid()}"
    block = os.urandom(1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        t0 = time.monotonic()
        for _ in range(mib):
            os.write(fd, block)
        os.fsync(fd)
        seconds = time.monotonic() - t0
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return mib / seconds


def cpu_times() -> tuple[float, float]:
    """(busy, total) CPU seconds of all CPUs since boot; idle and iowait are not busy."""
    times = psutil.cpu_times()
    total = sum(times)
    return total - times.idle - getattr(times, "iowait", 0.0), total


class CpuBusy:
    """with CpuBusy() as cpu: ...  -> cpu.fraction, the host's CPUs busy over the block
    (1.0 = every core busy all the time)."""

    def __enter__(self) -> CpuBusy:
        self._start = cpu_times()
        self.fraction: float | None = None
        return self

    def __exit__(self, *exc) -> None:
        busy, total = (now - then for now, then in zip(cpu_times(), self._start, strict=True))
        self.fraction = busy / total if total else None


def process_cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds (user + system) process `pid` has used since it started, None when
    it cannot be read."""
    if pid is None:
        return None
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return times.user + times.system


class CpuUse(CpuBusy):
    """with CpuUse(pid) as cpu: ...  -> cpu.fraction as CpuBusy, and cpu.cores, the CPU
    process `pid` (the Spark driver running the jobs; or several pids: the Kafka Streams
    peers) used over the block in cores (1.0 = one core all the time), cpu.seconds the
    CPU seconds it used (None when unknown)."""

    def __init__(self, pid: int | Sequence[int] | None):
        self.pids = [] if pid is None else [pid] if isinstance(pid, int) else list(pid)

    def _used(self) -> float | None:
        each = [process_cpu_seconds(pid) for pid in self.pids]
        return None if not each or None in each else sum(each)

    def __enter__(self) -> CpuUse:
        super().__enter__()
        self._t0, self._cpu0 = time.monotonic(), self._used()
        self.cores: float | None = None
        self.seconds: float | None = None
        return self

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        cpu, seconds = self._used(), time.monotonic() - self._t0
        if cpu is not None and self._cpu0 is not None and seconds > 0:
            self.seconds = cpu - self._cpu0
            self.cores = self.seconds / seconds


def fraction_of_ceiling(mb_per_s: float | None, disk_mb_s: float | None, replication_factor: int) -> float | None:
    """A produce figure as a fraction of the host's ceiling for its replication factor."""
    return stats.ratio(mb_per_s, None if disk_mb_s is None else disk_mb_s / replication_factor)


def furthest(measurements: list[dict], disk_mb_s: float | None, replication: dict[str, int]) -> dict | None:
    """The produce measurement furthest below its ceiling, with why: the CPU when the
    host's cores were (nearly) saturated during it, else the client's batching and
    request round trips (acks=all waits for the followers' fetch)."""
    scored = [(fraction_of_ceiling(m.get("mb_per_s"), disk_mb_s, replication[m["cell"]["mode"]]), m)
              for m in measurements if m["op"] == "produce"]
    scored = [(f, m) for f, m in scored if f is not None]
    if not scored:
        return None
    fraction, m = min(scored, key=lambda fm: fm[0])
    busy = m.get("cpu_busy")
    if busy is not None and busy >= 0.9:
        reason = (f"CPU: the host's cores were {busy:.0%} busy during it (three brokers, their replication and "
                  "the client on one host), so the disk was never the bound")
    else:
        reason = (f"neither the disk nor the CPU ({'-' if busy is None else f'{busy:.0%}'} busy): the client's "
                  "batches and request round trips (acks=all waits until the followers have fetched) bound it")
    return {"tool": m["tool"], "cell": m["cell"], "mb_per_s": m["mb_per_s"], "fraction": fraction, "reason": reason}

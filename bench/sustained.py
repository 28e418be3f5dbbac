"""Part 3c: the highest input rate the clean stage sustains in each mode (Spark
micro-batch, Spark real-time mode, its Kafka Streams peer) for HOLD_SECONDS without a
growing lag, in the same run on the same host.

The stage starts once per mode (bench.stages.started), is held at the lowest rate for
WARM_SECONDS unjudged (the JIT's first minute), then at each of RATES in turn. While
readings are fed at a rate, the lag (readings sent minus readings read back from the
stage's output) is sampled every SAMPLE_SECONDS; the rate is sustained when the lag's
trend over the hold (least squares, the first PACED_WARMUP_SECONDS left out) grows by
less than GROWTH of the input rate per second, and the feeder itself kept up (sent at
least FEEDER_SHARE of the rate: else the figure is the feeder's, and no verdict is
given). After each rate the stage drains before the next; the first rate not sustained
ends the mode.
"""

from __future__ import annotations

import statistics
import threading
import time

from bench import ceiling
from bench.pipeline import PACED_WARMUP_SECONDS, WARMUP
from bench.runner import progress
from bench.stages import MODES, STAGES, Running, started

STAGE = STAGES[0]  # clean: one hop, the stateless stage every pipeline starts with
RATES = (500, 1_000, 2_000, 4_000, 8_000)
QUICK_RATES = (500, 2_000)
HOLD_SECONDS = 60
QUICK_HOLD_SECONDS = 20
WARM_SECONDS = 60  # the first, unjudged hold at the lowest rate (see measure)
QUICK_WARM_SECONDS = 20
SAMPLE_SECONDS = 1.0
GROWTH = 0.02  # the lag growing by 2 % of the input rate per second: not sustained
FEEDER_SHARE = 0.95
DRAIN_TIMEOUT = 180


def slope(samples: list[tuple[float, float]]) -> float | None:
    """Least squares slope of (t, y) samples, per second; None under 3 samples."""
    if len(samples) < 3:
        return None
    try:
        return statistics.linear_regression([t for t, _ in samples], [y for _, y in samples]).slope
    except statistics.StatisticsError:  # every sample at the same time
        return None


def verdict(samples: list[tuple[float, float]], rate: int, sent_rate: float) -> tuple[bool | None, str]:
    """(sustained, why): None when the feeder fell short of the rate (nothing is known of
    the stage then), False when the lag grows by GROWTH of the rate per second or more."""
    if sent_rate < FEEDER_SHARE * rate:
        return None, f"the feeder sent {sent_rate:,.0f}/s of {rate:,}/s"
    measured = [(t, lag) for t, lag in samples if t >= PACED_WARMUP_SECONDS]
    growth = slope(measured)
    if growth is None:
        return None, "too few lag samples"
    limit = GROWTH * rate
    why = f"lag {'+' if growth >= 0 else ''}{growth:,.0f} rec/s (limit {limit:,.0f})"
    return growth < limit, why


def hold(running: Running, seq0: int, rate: int, seconds: int) -> dict:
    """Feeds `rate` for PACED_WARMUP_SECONDS + seconds from seq `seq0`, sampling the lag;
    then waits for the stage to drain. The hold's figures and verdict."""
    n = rate * (PACED_WARMUP_SECONDS + seconds)
    sent: list[float] = []
    failed: list[BaseException] = []

    def feed() -> None:
        try:
            running.feed(seq0, n, rate, sent)
        except Exception as e:  # raised below, in the measuring thread
            failed.append(e)

    feeder = threading.Thread(target=feed, daemon=True)
    samples: list[tuple[float, float]] = []
    with ceiling.CpuUse(running.pids()) as cpu:
        t0 = time.monotonic()
        feeder.start()
        while feeder.is_alive():
            feeder.join(SAMPLE_SECONDS)  # a sample per period until the feeder is done
            samples.append((time.monotonic() - t0, seq0 + len(sent) - running.watcher.count()))
        fed_seconds = time.monotonic() - t0
    if failed:
        raise RuntimeError(f"feeding {rate:,}/s failed: {failed[0]}") from failed[0]
    sustained, why = verdict(samples, rate, len(sent) / fed_seconds if fed_seconds else 0.0)
    drained = True
    try:
        running.wait_for(seq0 + n, DRAIN_TIMEOUT, f"drain after {rate:,}/s")
    except TimeoutError:
        drained = False
        why += f"; not drained {DRAIN_TIMEOUT} s after"
    lags = [lag for t, lag in samples if t >= PACED_WARMUP_SECONDS]
    progress(f"{STAGE.name} ({running.mode}) at {rate:,}/s: "
             f"{'sustained' if sustained else 'not sustained' if sustained is False else 'no verdict'} ({why})")
    return {"rate": rate, "seconds": seconds, "sent": len(sent), "sustained": sustained and drained, "why": why,
            "lag_max": max(lags, default=None), "lag_end": lags[-1] if lags else None,
            "cpu_busy": cpu.fraction, "cpu_cores": cpu.cores, "drained": drained}


def measure(mode: str, rates: tuple[int, ...], seconds: int, warm_seconds: int) -> dict:
    holds: list[dict] = []
    with started(STAGE, mode) as running:
        # A first hold at the lowest rate, not judged: a Spark driver's first minute is its
        # JIT compiling the plan (a QUICK run found micro-batch 10,330 readings behind after
        # 30 s at 500/s, then drained), which is start-up, not the rate it sustains.
        progress(f"{STAGE.name} ({mode}): a first hold at {rates[0]:,}/s for {warm_seconds} s, not judged")
        warm = hold(running, WARMUP, rates[0], warm_seconds)
        seq0 = WARMUP + warm["sent"]
        for rate in rates:
            h = hold(running, seq0, rate, seconds)
            holds.append(h)
            seq0 += h["sent"]
            if not h["sustained"]:
                break
    best = max((h["rate"] for h in holds if h["sustained"]), default=None)
    return {"stage": STAGE.name, "mode": mode, "highest_sustained_rate": best, "holds": holds, "warm_up": warm,
            "capped": bool(holds) and holds[-1]["sustained"] and holds[-1]["rate"] == rates[-1]}


def run_all(quick: bool) -> list[dict]:
    rates, seconds = (QUICK_RATES, QUICK_HOLD_SECONDS) if quick else (RATES, HOLD_SECONDS)
    warm_seconds = QUICK_WARM_SECONDS if quick else WARM_SECONDS
    out = []
    for mode in MODES:
        try:
            out.append(measure(mode, rates, seconds, warm_seconds))
        except Exception as e:  # one mode failing must not lose the other figures
            progress(f"{STAGE.name} ({mode}) sustained rate: failed: {e}")
            out.append({"stage": STAGE.name, "mode": mode, "failed": f"{e}"[:300]})
    return out


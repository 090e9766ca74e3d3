"""Timing by the contract: CUDA events on the current stream plus a device-wide synchronisation, an L2
flush before every timed call, fresh inputs rotated between calls, repeat until the mean is stable.

`measure` returns the per-call event times (µs) and host wall times (µs) of the timed calls and keeps the
outputs of a few secretly chosen timed calls, with an exact copy of their inputs, for the caller to recheck.
Before every call (outside the timed region) the input is rescaled by a random factor, so no two calls see
the same bits: a candidate that caches answers by pointer, shape or content gets them wrong.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

L2_FLUSH_BYTES = 256 << 20


@dataclass(frozen=True)
class Plan:
    min_runs: int
    max_runs: int
    cap_s: float  # wall-clock cap per shape for the timed loop
    rel_stderr: float  # stop once the standard error of the mean is below this fraction of the mean
    pool_bytes: int  # memory for distinct inputs rotated between calls
    rechecks: int  # timed outputs kept for rechecking


PLANS = {
    "quick": Plan(3, 10, 0.5, 0.03, 4 << 30, 1),
    "full": Plan(3, 60, 2.0, 0.01, 8 << 30, 1),
    "final": Plan(10, 300, 6.0, 0.005, 16 << 30, 4),
}


@dataclass
class Timing:
    event_us: list[float] = field(default_factory=list)
    wall_us: list[float] = field(default_factory=list)
    kept: list[tuple[Any, Any, Any]] = field(default_factory=list)  # (input copy, input after the call, output)

    def summary(self) -> dict[str, float | int]:
        ev = self.event_us
        return {"mean_us": statistics.fmean(ev), "std_us": statistics.pstdev(ev) if len(ev) > 1 else 0.0,
                "median_us": statistics.median(ev), "min_us": min(ev), "runs": len(ev),
                "wall_median_us": statistics.median(self.wall_us)}


class Flusher:
    def __init__(self, device: torch.device) -> None:
        self.buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device=device)

    def __call__(self) -> None:
        self.buf.zero_()


def measure(fn: Callable[[torch.Tensor], Any], pool: list[torch.Tensor], plan: Plan, flush: Flusher,
            rng: random.Random) -> Timing:
    gc.disable()  # a collection inside a timed call of a small shape is an outlier in its mean (and a full
    # collection before each shape would cost tens of ms with torch loaded: the loop makes no cycles worth it)
    try:
        return _measure(fn, pool, plan, flush, rng)
    finally:
        gc.enable()


def _measure(fn: Callable[[torch.Tensor], Any], pool: list[torch.Tensor], plan: Plan, flush: Flusher,
             rng: random.Random) -> Timing:
    out = Timing()
    keep_at = set(rng.sample(range(plan.min_runs), min(plan.rechecks, plan.min_runs)))
    scales = [1.0] * len(pool)
    started = time.monotonic()
    i = 0
    while True:
        slot = i % len(pool)
        a = pool[slot]
        factor = rng.uniform(0.75, 1.33) if 0.3 < scales[slot] < 3.0 else 1.0 / scales[slot]
        a.mul_(factor)  # new bits for every call: cached answers are wrong answers
        scales[slot] *= factor
        copy = a.clone() if i in keep_at else None
        flush()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        result = fn(a)
        end.record()
        torch.cuda.synchronize()  # the whole device: work on other streams ends inside the interval
        wall = (time.perf_counter() - t0) * 1e6
        out.event_us.append(start.elapsed_time(end) * 1e3)
        out.wall_us.append(wall)
        if copy is not None:
            out.kept.append((copy, a.clone(), result))
        del result
        i += 1
        if i < plan.min_runs:
            continue
        if i >= plan.max_runs or time.monotonic() - started > plan.cap_s:
            break
        mean = statistics.fmean(out.event_us)
        sem = statistics.stdev(out.event_us) / math.sqrt(len(out.event_us))
        if sem < plan.rel_stderr * mean:
            break
    return out


POOL_MAX = 4  # rescaling already makes every call's input new; more buffers only cost generation time


def pool_size(plan: Plan, input_bytes: int) -> int:
    """Distinct inputs to rotate: at least two, so consecutive calls never share a buffer."""
    return max(2, min(POOL_MAX, plan.max_runs, plan.pool_bytes // max(1, 2 * input_bytes)))


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))

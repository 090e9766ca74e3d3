"""What the host did while a shape was timed: CPU time the hypervisor gave to others (steal), where the
runner's process last ran, how often it was preempted, how long it and the judge waited for a CPU (the kernel's
schedstat: a busy host delays the judge's clock as a misreporting runner would), and how fast the judge's own CPU
ran a fixed loop. Diagnostics for the judge's noise (on the H200 VM whole evaluations run slow on the host side:
docs/benchmarks-history.md, fifth pass); they are reported beside a shape's times and never change its score (the
waits only decide whether a clock check that fails is a rejection or, the host too busy to tell, a crash:
`timed.clocks_agree`). Read from /proc by the judge (the runner's files there stay readable to it); anything
unreadable is None (Linux only, not inside every sandbox).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 10.0
# A fixed pure-Python loop the judge times once per round, after its timed calls (0.7 ms on a CI machine):
# whether a slow evaluation is a slow CPU (the loop slows too) or something between the processes and the
# driver (it does not).
PROBE_LOOPS = 20000


@dataclass(frozen=True)
class Sample:
    steal_ticks: int | None  # summed over every CPU of the host (USER_HZ ticks)
    cpu: int | None  # the CPU the process last ran on
    preempted: int | None  # its involuntary context switches so far
    loop_us: float | None = None  # the judge's time for PROBE_LOOPS iterations, just now
    judge_cpu: int | None = None  # the CPU the judge last ran on
    waited_ns: int | None = None  # the runner's and the judge's main threads' time runnable but not running, so far


def sample(pid: int, proc: Path = Path("/proc"), probe: bool = True) -> Sample:
    """The host now, for the runner `pid`, from the judge's thread that calls it."""
    runner, judge = _waited(proc / str(pid) / "schedstat"), _waited(proc / "thread-self" / "schedstat")
    return Sample(_steal(proc / "stat"), last_cpu(proc / str(pid) / "stat"),
                  _field(proc / str(pid) / "status", "nonvoluntary_ctxt_switches"),
                  loop_us() if probe else None, last_cpu(proc / "self" / "stat"),
                  None if runner is None else runner + (judge or 0))


def loop_us(loops: int = PROBE_LOOPS) -> float:
    began, n = time.perf_counter(), 0
    while n < loops:
        n += 1
    return round((time.perf_counter() - began) * 1e6, 1)


def between(before: Sample, after: Sample) -> dict[str, float | int | None]:
    """What happened from one sample to the next, as a shape's result reports it (the judge's loop as the
    later sample timed it: the judge times it once, after a round's calls)."""
    def minus(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a - b
    steal, waited = minus(after.steal_ticks, before.steal_ticks), minus(after.waited_ns, before.waited_ns)
    return {"steal_ms": None if steal is None else round(steal * TICK_MS, 1), "runner_cpu": after.cpu,
            "runner_preempted": minus(after.preempted, before.preempted),
            "waited_ms": None if waited is None else round(waited / 1e6, 2),
            "judge_loop_us": after.loop_us, "judge_cpu": after.judge_cpu}


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _steal(path: Path) -> int | None:
    """The 'cpu' line of /proc/stat: user nice system idle iowait irq softirq steal ..."""
    text = _read(path)
    fields = text.split("\n", 1)[0].split() if text else []
    return int(fields[8]) if len(fields) > 8 and fields[0] == "cpu" and fields[8].isdigit() else None


def _waited(path: Path) -> int | None:
    """The second field of a task's schedstat: nanoseconds spent runnable, waiting on a run queue."""
    fields = (_read(path) or "").split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def last_cpu(path: Path) -> int | None:
    """Field 39 of /proc/<pid>/stat; the fields are counted after the command's closing parenthesis, since
    the command itself may hold spaces and parentheses."""
    text = _read(path)
    fields = text.rsplit(")", 1)[-1].split() if text else []
    return int(fields[36]) if len(fields) > 36 and fields[36].lstrip("-").isdigit() else None


def _field(path: Path, name: str) -> int | None:
    for line in (_read(path) or "").splitlines():
        key, _, value = line.partition(":")
        if key == name and value.strip().isdigit():
            return int(value.strip())
    return None

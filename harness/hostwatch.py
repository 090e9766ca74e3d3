"""What the host did while a shape was timed: CPU time the hypervisor gave to others (steal), where the
runner's process last ran, and how often it was preempted. Diagnostics for the judge's noise (on the H200 VM
whole evaluations run slow on the host side: docs/benchmarks.md, fifth pass); they are reported beside a
shape's times and never change its score. Read from /proc by the judge (the runner's files there stay
readable to it); anything unreadable is None (Linux only, not inside every sandbox).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 10.0


@dataclass(frozen=True)
class Sample:
    steal_ticks: int | None  # summed over every CPU of the host (USER_HZ ticks)
    cpu: int | None  # the CPU the process last ran on
    preempted: int | None  # its involuntary context switches so far


def sample(pid: int, proc: Path = Path("/proc")) -> Sample:
    return Sample(_steal(proc / "stat"), _last_cpu(proc / str(pid) / "stat"),
                  _field(proc / str(pid) / "status", "nonvoluntary_ctxt_switches"))


def between(before: Sample, after: Sample) -> dict[str, float | int | None]:
    """What happened from one sample to the next, as a shape's result reports it."""
    def minus(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a - b
    steal = minus(after.steal_ticks, before.steal_ticks)
    return {"steal_ms": None if steal is None else round(steal * TICK_MS, 1), "runner_cpu": after.cpu,
            "runner_preempted": minus(after.preempted, before.preempted)}


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


def _last_cpu(path: Path) -> int | None:
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

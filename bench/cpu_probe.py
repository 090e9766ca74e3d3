"""Does a small shape's time depend on which CPU the launching thread runs on? The seed's 20x32 call (host-bound:
its time is mostly how fast Python launches its kernels) timed back to back with the launching thread pinned to
each allowed CPU in turn, twice round, plus the machine's CPU topology.

    python bench/cpu_probe.py > cpu_probe.jsonl   (a JSON line per CPU and round, then the topology)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

from qrjudge.cases import make_batch
from qrjudge.specs import BENCHMARK

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from loop_timing import load, timed_call  # noqa: E402


def median_us(fn, inputs, flush, calls: int = 40) -> float:
    return statistics.median(timed_call(fn, inputs[i % len(inputs)], flush) for i in range(calls))


def main() -> None:
    fn = load(ROOT / "seed_kernels/blocked_wy")
    spec = BENCHMARK[0]
    inputs = [make_batch(spec, seed, torch.device("cuda")) for seed in range(4)]
    flush = torch.empty((256 << 20) // 4, device="cuda")
    fn(inputs[0])
    cpus = sorted(os.sched_getaffinity(0))
    for round_ in (1, 2):
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            median_us(fn, inputs, flush, 10)  # settle on the new CPU
            print(json.dumps({"round": round_, "cpu": cpu, "median_us": round(median_us(fn, inputs, flush), 1)}),
                  flush=True)
    os.sched_setaffinity(0, set(cpus))
    topology = subprocess.run(["lscpu", "-e=CPU,CORE,SOCKET,NODE,MHZ,MAXMHZ"], capture_output=True, text=True)
    print(json.dumps({"lscpu": topology.stdout, "loadavg": Path("/proc/loadavg").read_text().strip()}))


if __name__ == "__main__":
    main()

"""Where does a small shape's time go? The blocked_wy seed timed in one process, the way the old single-process
harness did, and with one thing of the three-process judge added at a time: the input in CuPy memory, in CUDA
IPC memory another process exported, another process's idle CUDA context, a busy one, host gaps between calls (asleep or spinning).

    python bench/probe_timing.py [--gaps] > probe_timing.jsonl   (a JSON line per shape; --gaps: host gaps only)
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cupy
import torch

from qrjudge.arena import _wrap
from qrjudge.cases import make_batch
from qrjudge.specs import BENCHMARK

ROOT = Path(__file__).resolve().parents[1]
SPECS = [BENCHMARK[0], BENCHMARK[1], BENCHMARK[3]]
CALLS = 60

CHILD = r"""
import sys, time, cupy, torch
mode, count = sys.argv[1], int(sys.argv[2])
mem = cupy.cuda.Memory(count * 4)
print(cupy.cuda.runtime.ipcGetMemHandle(mem.ptr).hex(), flush=True)
x = torch.zeros(1 << 16, device="cuda")
while True:
    if mode == "sync":  # the judge's part of a call: some work in its own context, then "go"
        if not sys.stdin.read(1):
            break
        x.add_(1)
        torch.cuda.synchronize()
        print("g", end="", flush=True)
    elif mode == "busy":
        x.add_(1)
        torch.cuda.synchronize()
        time.sleep(0.001)
    else:
        time.sleep(0.05)
"""


def load_kernel():
    spec = importlib.util.spec_from_file_location("seed", ROOT / "seed_kernels/blocked_wy/kernel.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "seed_kernels/blocked_wy"))
    spec.loader.exec_module(module)
    return module.custom_kernel


def child(mode: str, count: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(count)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def timed(fn, spec, slot, gap_before=0.0, gap_after_sync=0.0, wait=time.sleep, warm_flushes=0, before=None) -> dict:
    """CALLS timed calls of fn on fresh inputs copied into `slot`, as the old harness timed them."""
    flush = torch.empty((256 << 20) // 4, device="cuda")
    inputs = [make_batch(spec, seed, torch.device("cuda")) for seed in range(4)]
    fn(inputs[0])
    events = []
    for i in range(CALLS):
        if gap_before:
            wait(gap_before)
        if before:
            before()
        slot.copy_(inputs[i % 4])
        for _ in range(warm_flushes):  # ~70 us of device work each
            flush.zero_()
        flush.zero_()
        torch.cuda.synchronize()
        if gap_after_sync:
            time.sleep(gap_after_sync)
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn(slot)
        end.record()
        torch.cuda.synchronize()
        events.append(begin.elapsed_time(end) * 1e3)
    return {"median_us": round(statistics.median(events), 1), "min_us": round(min(events), 1),
            "mean_us": round(statistics.fmean(events), 1)}


def components(spec) -> dict:
    """The runner's per-call work outside the timed region, each part timed on its own (ms)."""
    from qrjudge import checker

    a = make_batch(spec, 1, torch.device("cuda"))
    out = (a.clone(), a.new_zeros(a.shape[:2]))
    flush = torch.empty((256 << 20) // 4, device="cuda")
    parts = {"make_batch": lambda: make_batch(spec, 2, torch.device("cuda")), "flush": flush.zero_,
             "sanity": lambda: checker.sanity(a, out), "equal": lambda: torch.equal(a, out[0])}
    times = {}
    for name, part in parts.items():
        samples = []
        for _ in range(7):
            torch.cuda.synchronize()
            t = time.perf_counter()
            part()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) * 1e3)
        times[name] = round(statistics.median(samples), 3)
    return times


def main() -> None:
    torch.cuda.init()
    fn = load_kernel()
    biggest = max(s.batch * s.n * s.n for s in SPECS)
    own = torch.empty(biggest, device="cuda")
    mem = cupy.cuda.Memory(biggest * 4)
    dl = _wrap(mem.ptr, biggest, mem)
    gaps_only = "--gaps" in sys.argv
    for spec in SPECS:
        size = spec.batch * spec.n * spec.n

        def view(flat):
            return flat[:size].view(spec.batch, spec.n, spec.n)

        rows = {"plain": timed(fn, spec, view(own)), "dlpack": timed(fn, spec, view(dl)),
                "gap_3ms": timed(fn, spec, view(own), gap_before=0.003),
                "gap_after_sync_3ms": timed(fn, spec, view(own), gap_after_sync=0.003),
                "spin_3ms": timed(fn, spec, view(own), gap_before=0.003, wait=spin),
                "spin_1ms": timed(fn, spec, view(own), gap_before=0.001, wait=spin),
                "spin_0.3ms": timed(fn, spec, view(own), gap_before=0.0003, wait=spin),
                "spin_3ms_warm_1ms": timed(fn, spec, view(own), gap_before=0.003, wait=spin, warm_flushes=14),
                "spin_3ms_warm_3ms": timed(fn, spec, view(own), gap_before=0.003, wait=spin, warm_flushes=42),
                "sleep_3ms_warm_1ms": timed(fn, spec, view(own), gap_before=0.003, warm_flushes=14)}
        if gaps_only:
            proc, _ = child("sync", 4)

            def handshake():
                proc.stdin.write("x")
                proc.stdin.flush()
                proc.stdout.read(1)
            rows["other_ctx_works_before_each_call"] = timed(fn, spec, view(own), before=handshake)
            proc.kill()
            proc.wait()
            rows["plain_again"] = timed(fn, spec, view(own))
            print(json.dumps({"shape": spec.label, **rows}), flush=True)
            continue
        proc, handle = child("idle", biggest)
        ipc_ptr = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(handle))
        rows["idle_ctx_plain"] = timed(fn, spec, view(own))
        rows["idle_ctx_ipc"] = timed(fn, spec, view(_wrap(ipc_ptr, biggest, None)))
        rows["idle_ctx_ipc_gap_3ms"] = timed(fn, spec, view(_wrap(ipc_ptr, biggest, None)), gap_before=0.003)
        cupy.cuda.runtime.ipcCloseMemHandle(ipc_ptr)
        proc.kill()
        proc.wait()
        proc, _ = child("busy", 4)
        rows["busy_ctx_plain"] = timed(fn, spec, view(own))
        proc.kill()
        proc.wait()
        rows["plain_again"] = timed(fn, spec, view(own))
        print(json.dumps({"shape": spec.label, "components_ms": components(spec), **rows}), flush=True)


if __name__ == "__main__":
    main()

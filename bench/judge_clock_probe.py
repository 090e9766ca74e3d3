"""Can the judge time a call by a clock that no process of the candidate's holds? (docs/QR_CONTRACT.md, "Times")

The runner's CUDA events can be made to lie from inside its process (tests/cheats/frames_clock.py), and the judge's
host clock, which catches a lie, has a slack of 3 ms a call: the three small shapes can be reported near nothing.
The clock this probe measures before anything is built on it: the judge's own CUDA events, in its own context,
ordered against the runner's stream. Two designs (`--design`):

- `round-trip`: the judge flushes L2, records the interprocess event `released` and its start event, and asks the
  runner; the runner's stream waits for `released`, runs the work between its own events and records the
  interprocess event `finished`; once the runner says it has launched, the judge's stream waits for `finished`
  and records its end event. (An event wait binds to the event's last record when the wait is enqueued, so the
  judge cannot enqueue it before the runner has recorded: the host's round trip lands inside the judge's clock.)
- `enqueued` (the default): the judge enqueues everything before it asks: the flush, its hold (the GPU busy while
  the runner launches, as qrjudge's hold does), `released`, its start event, a wait in the stream for a flag in
  shared device memory to reach the call's number (cuStreamWaitValue32), its end event. The runner's stream waits
  for `released`, runs the work, and writes the call's number into the flag. No host round trip in the clock.
- `none`: the judge's flush, hold, `released` and start only, nothing of its own waiting while the call runs: the
  runner's events as a call finds the GPU without the judge's clock, to compare with theirs under `enqueued`. The
  `joined` workload (the current stream waits on a side stream mid-call, eight times) is the case to compare: in
  the judge, a stream of the judge's waiting on the GPU during a call made the GPU turn between the two contexts
  (about 150 us a turn on an H100) wherever the runner's stream waited (notebook 2026-12-03/run75-76).

A runner that writes its flag (or records `finished`) early hands the judge outputs not yet written (`--early`:
each call's work ends by writing the call's number, which the judge reads right behind its end event). `--side`:
the runner also launches, before its work, a kernel on a stream that does not wait for `released`, which writes
the GPU's global timer: does anything of the runner's run before the judge's start (the judge's own kernel writes
the timer there), while the judge's flush and hold run in its context? Per workload (sleeps of fixed length, small
batched products, many small launches: a host-paced call) the probe reports the judge's time over the runner's
events and how much that wanders, the judge's host clock over the same calls, and (`enqueued`) how long after the
judge's start the runner's stream ran.

    python bench/judge_clock_probe.py [--design enqueued|round-trip|none] [--calls 300] [--early] [--side] [--out f]

GPU only; two processes on one GPU, as the judge and the runner are.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from typing import Any

WORKLOADS = [("sleep", 2_000), ("sleep", 20_000), ("sleep", 200_000), ("sleep", 2_000_000), ("bmm", 20, 32),
             ("bmm", 40, 176), ("bmm", 40, 352), ("launches", 40), ("joined", 8)]
STAMP = r"""extern "C" __global__ void stamp(unsigned long long* out, int i) {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); out[i] = t; }"""
HOLD_US = 160.0  # about what qrjudge holds on an H200 (qrjudge/timing.py, hold_for)


class Gpu:
    """What both sides launch beside torch: the global-timer stamp and (judge) the stream wait."""

    def __init__(self, torch: Any) -> None:
        import cupy

        self.torch, self.cupy = torch, cupy
        self.stamp_kernel = cupy.RawKernel(STAMP, "stamp")
        libcuda = ctypes.CDLL("libcuda.so.1")
        self.wait = getattr(libcuda, "cuStreamWaitValue32_v2", None) or libcuda.cuStreamWaitValue32
        self.wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]

    def on(self, stream: Any) -> Any:
        return self.cupy.cuda.ExternalStream(stream.cuda_stream)

    def stamp(self, stream: Any, stamps: Any, i: int) -> None:
        with self.on(stream):
            self.stamp_kernel((1,), (1,), (self.cupy.asarray(stamps), self.cupy.int32(i)))

    def wait_for(self, stream: Any, flag: Any, value: int) -> None:
        """The stream waits until the 32-bit flag is at least `value` (CU_STREAM_WAIT_VALUE_GEQ)."""
        code = self.wait(ctypes.c_void_p(stream.cuda_stream), flag.data_ptr(), value, 0)
        if code:
            raise RuntimeError(f"cuStreamWaitValue32 failed: CUresult {code}")


def work(torch: Any, kind: tuple[Any, ...], tensors: dict[tuple[Any, ...], Any]) -> None:
    """One call's work on the current stream."""
    if kind[0] == "sleep":
        torch.cuda._sleep(kind[1])
    elif kind[0] == "bmm":
        a = tensors.setdefault(kind, torch.randn(kind[1], kind[2], kind[2], device="cuda"))
        torch.bmm(a, a)
    elif kind[0] == "launches":
        x = tensors.setdefault(kind, torch.zeros(1024, device="cuda"))
        for _ in range(kind[1]):
            x.add_(1.0)
    else:  # "joined": the current stream waits on a side stream mid-call, kind[1] times (as two streams joined by events)
        side = tensors.setdefault(("side",), torch.cuda.Stream())
        for _ in range(kind[1]):
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                torch.cuda._sleep(20_000)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda._sleep(20_000)


def runner(conn: Any, design: str, early: bool, side: bool) -> None:
    """The runner's side: its stream waits for the judge's `released`; after the work it records `finished`
    (round-trip) or writes the call's number into the judge's flag (enqueued)."""
    import torch

    torch.cuda.init()
    gpu, stream, other, tensors = Gpu(torch), torch.cuda.Stream(), torch.cuda.Stream(), {}
    handle, flag, stamps = conn.recv()
    released = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), handle)
    finished = torch.cuda.Event(interprocess=True)
    mark = torch.zeros(1, dtype=torch.int64, device="cuda")
    conn.send((finished.ipc_handle(), mark))

    def done(number: int) -> None:
        if design == "enqueued":
            flag.fill_(number)
        else:
            finished.record(stream)

    while (message := conn.recv()) is not None:
        kind, number = message
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if side:
            gpu.stamp(other, stamps, 2)  # not behind `released`
        with torch.cuda.stream(stream):
            stream.wait_event(released)
            gpu.stamp(stream, stamps, 1)
            begin.record()
            if early:
                done(number)
            work(torch, kind, tensors)
            mark.fill_(number)
            end.record()
            if not early:
                done(number)
        conn.send("launched")
        torch.cuda.synchronize()
        conn.send(begin.elapsed_time(end) * 1e3)


def judge_call(torch: Any, conn: Any, state: dict[str, Any], kind: tuple[Any, ...], number: int) -> dict[str, float]:
    """One call timed three ways: the runner's events, the judge's events, the judge's host clock (us); and by
    the global timer, when the runner's stream (and its side stream) ran against the judge's start."""
    gpu, stream, released, stamps = state["gpu"], state["stream"], state["released"], state["stamps"]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        stamps.zero_()
        state["flush"]()
        if state["design"] in ("enqueued", "none"):
            state["hold"]()  # the judge's hold, qrjudge's (timing.Hold), on its stream
        gpu.stamp(stream, stamps, 0)
        released.record(stream)
        start.record(stream)
        if state["design"] == "enqueued":
            gpu.wait_for(stream, state["flag"], number)
            end.record(stream)
            seen = state["mark"].clone()  # what the work had written when the judge's clock stopped
        elif state["design"] == "none":  # nothing of the judge's waits during the call: the runner's events alone
            end, seen = start, state["mark"].new_full((1,), number)
    began = time.perf_counter()
    conn.send((kind, number))
    assert conn.recv() == "launched"
    if state["design"] == "round-trip":
        with torch.cuda.stream(stream):
            stream.wait_event(state["finished"])
            end.record(stream)
            seen = state["mark"].clone()
    stream.synchronize()
    runner_us = conn.recv()
    host_us = (time.perf_counter() - began) * 1e6
    at = [int(t) for t in stamps.tolist()]
    judge_us = start.elapsed_time(end) * 1e3 if state["design"] != "none" else float("nan")
    return {"runner_us": runner_us, "judge_us": judge_us, "host_us": host_us,
            "stale": float(int(seen.item()) != number), "runner_after_start_us": (at[1] - at[0]) / 1e3,
            "side_before_start_us": (at[0] - at[2]) / 1e3 if at[2] else float("nan")}


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(v for v in values if v == v)
    if not ordered:
        return {}

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)
    return {"median": round(statistics.median(ordered), 2), "std": round(statistics.pstdev(ordered), 2),
            "min": at(0.0), "p01": at(0.01), "p99": at(0.99), "max": at(1.0)}


def summary(kind: tuple[Any, ...], rows: list[dict[str, float]]) -> dict[str, Any]:
    return {"kind": list(kind), "runner_us": spread([r["runner_us"] for r in rows]),
            "judge_less_runner_us": spread([r["judge_us"] - r["runner_us"] for r in rows]),
            "host_less_runner_us": spread([r["host_us"] - r["runner_us"] for r in rows]),
            "runner_after_start_us": spread([r["runner_after_start_us"] for r in rows]),
            "side_before_start_us": spread([r["side_before_start_us"] for r in rows]),
            "stale": sum(r["stale"] for r in rows)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--design", choices=("enqueued", "round-trip", "none"), default="enqueued")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per workload (after 20 warm-ups)")
    parser.add_argument("--early", action="store_true", help="the runner says it finished before its work")
    parser.add_argument("--side", action="store_true", help="the runner stamps the timer from a stream not held")
    parser.add_argument("--out", help="write every call's times here as JSON")
    args = parser.parse_args()
    import torch
    import torch.multiprocessing as mp

    from qrjudge.timing import Flusher, Hold

    if not torch.cuda.is_available():
        print("judge_clock_probe: needs a GPU", file=sys.stderr)
        return 2
    torch.cuda.init()
    context = mp.get_context("spawn")
    conn, other = context.Pipe()
    process = context.Process(target=runner, args=(other, args.design, args.early, args.side), daemon=True)
    process.start()
    released = torch.cuda.Event(interprocess=True)
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    stamps = torch.zeros(4, dtype=torch.int64, device="cuda")
    conn.send((released.ipc_handle(), flag, stamps))
    handle, mark = conn.recv()
    state = {"stream": torch.cuda.Stream(), "released": released, "mark": mark, "flag": flag, "stamps": stamps,
             "finished": torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), handle),
             "flush": Flusher(torch.device("cuda")), "hold": Hold(torch, HOLD_US), "gpu": Gpu(torch),
             "design": args.design}
    report: dict[str, Any] = {"gpu": torch.cuda.get_device_name(), **vars(args), "workloads": []}
    calls, number = [], 0
    for kind in WORKLOADS:
        rows = []
        for i in range(20 + args.calls):
            number += 1
            row = judge_call(torch, conn, state, kind, number)
            if i >= 20:
                rows.append(row)
        calls.append({"kind": list(kind), "calls": rows})
        report["workloads"].append(summary(kind, rows))
        print(json.dumps(report["workloads"][-1]), flush=True)
    conn.send(None)
    process.join(30)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({**report, "every_call": calls}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Can the judge time a call by a clock that no process of the candidate's holds? (docs/QR_CONTRACT.md, "Times")

The runner's CUDA events can be made to lie from inside its process (tests/cheats/frames_clock.py), and the judge's
host clock, which catches a lie, has a slack of 3 ms a call: the three small shapes can be reported near nothing.
The clock this probe measures before anything is built on it: the judge's own CUDA events, in its own context,
ordered against the runner's stream through interprocess events. Per call:

- the judge flushes L2 on its stream, records the interprocess event `released` and its start event behind it,
  and tells the runner to go;
- the runner's stream waits for `released`, runs the work (launched while the judge's flush runs, as behind the
  hold), records its own events around it as qrjudge does now, records the interprocess event `finished`, and says
  it has launched;
- the judge's stream waits for `finished` and records its end event: the judge's time is start to end.

A runner that records `finished` early hands the judge outputs not yet written (`--early`: each call's work ends by
writing the call's number, which the judge reads right behind its end event). This probe measures what the clock
costs over the runner's events and how much that wanders, per workload: sleeps of fixed length, small batched
products, and many small launches (a host-paced call), beside the judge's host clock over the same calls.

    python bench/judge_clock_probe.py [--calls 300] [--early] [--out probe.json]

GPU only; two processes on one GPU, as the judge and the runner are.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

WORKLOADS = [("sleep", 2_000), ("sleep", 20_000), ("sleep", 200_000), ("sleep", 2_000_000), ("bmm", 20, 32),
             ("bmm", 40, 176), ("bmm", 40, 352), ("launches", 40)]


def work(torch: Any, kind: tuple[Any, ...], tensors: dict[tuple[Any, ...], Any]) -> None:
    """One call's work on the current stream."""
    if kind[0] == "sleep":
        torch.cuda._sleep(kind[1])
    elif kind[0] == "bmm":
        a = tensors.setdefault(kind, torch.randn(kind[1], kind[2], kind[2], device="cuda"))
        torch.bmm(a, a)
    else:
        x = tensors.setdefault(kind, torch.zeros(1024, device="cuda"))
        for _ in range(kind[1]):
            x.add_(1.0)


def runner(conn: Any, early: bool) -> None:
    """The runner's side: its stream waits for the judge's `released`, records `finished` behind the work."""
    import torch

    torch.cuda.init()
    stream, tensors = torch.cuda.Stream(), {}
    released = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), conn.recv())
    finished = torch.cuda.Event(interprocess=True)
    mark = torch.zeros(1, dtype=torch.int64, device="cuda")
    conn.send((finished.ipc_handle(), mark))
    while (message := conn.recv()) is not None:
        kind, number = message
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            stream.wait_event(released)
            begin.record()
            if early:
                finished.record(stream)
            work(torch, kind, tensors)
            mark.fill_(number)
            end.record()
            if not early:
                finished.record(stream)
        conn.send("launched")
        stream.synchronize()
        conn.send(begin.elapsed_time(end) * 1e3)


def judge_call(torch: Any, conn: Any, state: dict[str, Any], kind: tuple[Any, ...], number: int) -> dict[str, float]:
    """One call timed three ways: the runner's events, the judge's events, the judge's host clock (us)."""
    stream, released, finished = state["stream"], state["released"], state["finished"]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        state["flush"].zero_()
        released.record(stream)
        start.record(stream)
    began = time.perf_counter()
    conn.send((kind, number))
    assert conn.recv() == "launched"
    with torch.cuda.stream(stream):
        stream.wait_event(finished)
        end.record(stream)
        seen = state["mark"].clone()  # what the work had written when the judge's clock stopped
    stream.synchronize()
    runner_us = conn.recv()
    host_us = (time.perf_counter() - began) * 1e6
    return {"runner_us": runner_us, "judge_us": start.elapsed_time(end) * 1e3, "host_us": host_us,
            "stale": float(int(seen.item()) != number)}


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)
    return {"median": round(statistics.median(ordered), 2), "std": round(statistics.pstdev(ordered), 2),
            "min": at(0.0), "p01": at(0.01), "p99": at(0.99), "max": at(1.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="timed calls per workload (after 20 warm-ups)")
    parser.add_argument("--early", action="store_true", help="the runner records `finished` before its work")
    parser.add_argument("--out", help="write every call's three times here as JSON")
    args = parser.parse_args()
    import torch
    import torch.multiprocessing as mp

    if not torch.cuda.is_available():
        print("judge_clock_probe: needs a GPU", file=sys.stderr)
        return 2
    torch.cuda.init()
    context = mp.get_context("spawn")
    conn, other = context.Pipe()
    process = context.Process(target=runner, args=(other, args.early), daemon=True)
    process.start()
    released = torch.cuda.Event(interprocess=True)
    conn.send(released.ipc_handle())
    handle, mark = conn.recv()
    state = {"stream": torch.cuda.Stream(), "released": released, "mark": mark,
             "finished": torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), handle),
             "flush": torch.empty(64 << 20, dtype=torch.float32, device="cuda")}
    report, calls = {"gpu": torch.cuda.get_device_name(), "early": args.early, "workloads": []}, []
    number = 0
    for kind in WORKLOADS:
        rows = []
        for i in range(20 + args.calls):
            number += 1
            row = judge_call(torch, conn, state, kind, number)
            if i >= 20:
                rows.append(row)
        calls.append({"kind": list(kind), "calls": rows})
        summary = {"kind": list(kind), "runner_us": spread([r["runner_us"] for r in rows]),
                   "judge_less_runner_us": spread([r["judge_us"] - r["runner_us"] for r in rows]),
                   "host_less_runner_us": spread([r["host_us"] - r["runner_us"] for r in rows]),
                   "stale": sum(r["stale"] for r in rows)}
        report["workloads"].append(summary)
        print(json.dumps(summary), flush=True)
    conn.send(None)
    process.join(30)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({**report, "every_call": calls}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a small benchmark shape's call costs outside its timed region, piece by piece, on this machine.

A `full` evaluation times 138 calls of 20x32, 40x176 and 40x352 (36 ms of kernel time) in roughly 0.75 s of its
exclusive hold on an H200, by an estimate from a profile's totals (docs/benchmarks.md, "Throughput"): some 5 ms a
call, most of it neither the kernel nor what the judge's clock sees between its ask and the runner's `done`. This times the pieces of that cycle
(qrjudge/calls.py `Context.call` and `time_shape`, qrjudge/runner.py `Session.call`) each on its own, the median of
REPEATS, with how many of each one call makes, so that a cut aims at a measured cost:

    python bench/call_cycle.py [--shape 20x32] [--repeats 300] [--device cpu]

Each piece is run as the cycle runs it (on the GPU: with the synchronisation it ends in). The pipe round trip is
one JSON line each way between this process (a blocking read, as the judge reads) and a child that spins on its
read (as the runner does, qrjudge/wire.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ECHO = """
import sys
from qrjudge import wire
gpu = sys.argv[3] == "cuda"
if gpu:  # a context of its own, as the runner has
    import torch
    x = torch.zeros(1, device="cuda")
reader = wire.LineReader(int(sys.argv[1]), spin_s=wire.SPIN_S)
while line := reader.readline():
    if gpu:
        x.add_(1)
        torch.cuda.synchronize()
    wire.send(int(sys.argv[2]), {"done": True, **__import__("json").loads(line)})
"""


def timed(piece: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median, 90th percentile) of `piece`'s wall time in us, after a few untimed runs."""
    for _ in range(5):
        piece()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        piece()
        times.append((time.perf_counter() - began) * 1e6)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def round_trip(device: str = "cpu") -> tuple[Callable[[], object], Callable[[], None]]:
    """One message to a spinning child and its reply read with a blocking read; and how to stop the child. With
    `device` cuda the child runs a tiny kernel and synchronises before it answers, in a CUDA context of its own."""
    from qrjudge import wire

    to_child, theirs_in = os.pipe()[::-1]
    theirs_out, from_child = os.pipe()[::-1]
    child = subprocess.Popen([sys.executable, "-c", ECHO, str(theirs_in), str(theirs_out), device],
                             pass_fds=(theirs_in, theirs_out), env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(theirs_in)
    os.close(theirs_out)
    reader = wire.LineReader(from_child)
    message = {"op": "call", "spec": [20, 32, 1.0, "dense", None], "staged": True, "timed": True, "flush": True}

    def piece() -> object:
        wire.send(to_child, {**message, "nonce": 12345678901234})
        return json.loads(reader.readline())

    def stop() -> None:
        os.close(to_child)
        child.wait()
    return piece, stop


def pieces(batch: int, n: int, device: str) -> dict[str, tuple[int, Callable[[], object]]]:
    """name -> (how many one primed timed call makes, the piece)."""
    import torch

    from qrjudge import checker, hostwatch, integrity, runner, timing
    from qrjudge.cases import make_batch
    from qrjudge.specs import Spec

    dev = torch.device(device)
    spec = Spec(batch, n, 1.0, "dense")
    a = make_batch(spec, 1, dev)
    h, tau, host = a.clone(), a[..., 0].clone(), a.cpu()
    def synced(value: object) -> object:  # what a piece made, once the device has finished it
        if device == "cuda":
            torch.cuda.synchronize()
        return value
    timer = timing.CudaTimer() if device == "cuda" else timing.HostTimer()
    snapshot = integrity.Snapshot(runner.critical(timer, device == "cuda"))  # the runner's own
    out: dict[str, tuple[int, Callable[[], object]]] = {
        "judge: make_batch (dense)": (1, lambda: synced(make_batch(spec, 7, dev))),
        "judge: the input to the host (prime path)": (1, lambda: a.cpu()),
        "judge and runner: torch.equal": (5, lambda: torch.equal(a, h)),
        "judge: the kept outputs cloned": (1, lambda: (h.clone(), tau.clone())),
        "runner: the staged input copied in": (1, lambda: synced(h.copy_(host))),
        "runner: sanity of the outputs": (1, lambda: checker.sanity(a, (h, tau))),
        "runner: its integrity snapshot compared": (3, snapshot.changed),
        "judge: hostwatch sample (per round, not per call)": (0, lambda: hostwatch.sample(os.getpid(), probe=False)),
    }
    if isinstance(timer, timing.CudaTimer):
        cuda_timer = timer

        def flushed_and_held() -> None:
            cuda_timer.flush()
            cuda_timer.settle()
            cuda_timer.start()
            cuda_timer.stop()
            cuda_timer.settle()
        out["runner: L2 flush, hold, events, syncs"] = (1, flushed_and_held)
    return out


def context_switches(repeats: int) -> list[tuple[str, int, float, float]]:
    """A tiny kernel and a synchronisation here, then one in the child's context (a round trip), against both in
    this process (with a round trip to a child that touches no GPU): the difference is what the GPU's turn from
    one process's context to the other's costs, which a call cycle pays at each hand-over."""
    import torch

    y = torch.zeros(1, device="cuda")

    def mine() -> None:
        y.add_(1)
        torch.cuda.synchronize()
    return [hand_over(mine, "cuda", "a kernel here, then one in the child's context", 1, repeats),
            hand_over(mine, "cpu", "both kernels here, the child on the CPU", 2, repeats)]


def hand_over(mine: Callable[[], None], device: str, label: str, kernels_here: int,
              repeats: int) -> tuple[str, int, float, float]:
    """`kernels_here` of `mine`, then a round trip to a child on `device` (the same GPU work in all)."""
    trip, stop = round_trip(device)

    def turn() -> None:
        for _ in range(kernels_here):
            mine()
        trip()
    try:
        return (f"hand-over: {label}", 0, *timed(turn, repeats))
    finally:
        stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="20x32", help="BATCHxN (default 20x32)")
    p.add_argument("--repeats", type=int, default=300)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = p.parse_args()
    batch, n = (int(x) for x in args.shape.split("x"))
    rows = [(name, count, *timed(piece, args.repeats)) for name, (count, piece) in pieces(batch, n, args.device).items()]
    trip, stop = round_trip()
    try:
        rows.append(("judge <-> runner: one JSON line each way (prime, call: done + reply)", 3, *timed(trip, args.repeats)))
    finally:
        stop()
    if args.device == "cuda":  # does the GPU going from one process's context to the other's cost time of its own?
        rows.extend(context_switches(args.repeats))
    print(f"{args.shape} on {args.device}, {args.repeats} repeats: median and 90th percentile (us), times a call, "
          "us a call")
    total = 0.0
    for name, count, median, p90 in rows:
        total += count * median
        print(f"  {name:70} {median:9.1f} {p90:9.1f}  x{count}  {count * median:9.1f}")
    print(f"  {'sum of the pieces a call makes':70} {'':19}      {total:9.1f}")


if __name__ == "__main__":
    main()

"""The judge: the trusted half of a QR evaluation. It never runs candidate code.

    python -m qrjudge.judge --mode MODE --seed S (--kernel-dir DIR | --baseline) [--wait]

Run by the supervisor (qrjudge/supervisor.py), it starts the runner (qrjudge/runner.py, the process that imports the
candidate), shares three GPU buffers with it (qrjudge/arena.py) and drives it call by call. For every call
it generates a fresh input from a secret seed and writes it into the shared A; afterwards it checks that the
candidate left A unchanged, and checks the candidate's outputs against it with the contract's gates
(every test; every timed call: where checking a whole call is costly, a secret sample of its matrices in
`full` mode, every matrix in `final`). It times each call with its own clock too, and rejects a candidate
whose reported times leave more unexplained than the overhead it measured on a reference function before the
candidate was loaded (the stages are qrjudge/stages.py's, the timed one qrjudge/timed.py's; this module drives
them in order, alone, or on a GPU shared with other evaluations with qrjudge/sharing.py).

The judge is non-dumpable and the runner lives in a user namespace of its own, so the runner cannot read
or write the judge's memory or pipes. Stdout carries JSON lines only the judge writes: progress
(`{"stage": ..., "label": ...}`), then the verdict (`{"final": {...}}`). Stages raise one `Verdict`, caught
once in `main`. One call of the candidate, as every stage makes it, is qrjudge/calls.py's `Context.call`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from qrjudge import isolation
from qrjudge.calls import Context
from qrjudge.link import Runner
from qrjudge.sharing import evaluate_sharing, holding, lifetime, with_lock
from qrjudge.stages import load, run_tests, scan, start, warm
from qrjudge.timed import calibrate, measured, quiet
from qrjudge.verdict import Report, Verdict

if TYPE_CHECKING:
    from qrjudge.gpulock import GpuLock


def evaluate(ctx: Context, t0: float) -> Verdict:
    isolated = start(ctx)
    began = time.monotonic()
    calibrate(ctx)
    ctx.timings["calibrate_s"] = time.monotonic() - began
    ctx.timings["startup_s"] = time.monotonic() - t0
    compile_info = load(ctx)
    began = time.monotonic()
    labels, worst = run_tests(ctx)
    ctx.timings["tests_s"] = time.monotonic() - began
    quiet(ctx)
    return measured(ctx, isolated, compile_info, labels, worst)


def evaluate_alone(ctx: Context, t0: float, lock: GpuLock | None) -> Verdict:
    """The evaluation with the GPU to itself: one runner tests and is timed. With `lock` (EVOLVE_GPU_ALONE: `per_gpu
    = 1`), the GPU's lock is held exclusively from the CUDA contexts until that runner is gone, so that whatever
    else judges on this GPU (`evolve try` beside a run, an agent's tries, another run) takes its turn instead of
    running beside this evaluation's timed calls."""
    with contextlib.ExitStack() as stack:
        if lock is not None:
            stack.enter_context(holding(ctx, lock.exclusive()))
            stack.enter_context(lifetime(ctx, ctx.runner))
        warm(ctx)
        ctx.timings["cuda_start_s"] = time.monotonic() - t0  # the scan, the lock, both processes' CUDA contexts
        verdict = evaluate(ctx, t0)
    return verdict if lock is None else with_lock(ctx, lock, verdict)


def load_judge() -> None:
    """Every module the judge runs, imported now, before the runner is asked to import the candidate: nothing
    the judge executes is read from disk after candidate code could have run (the runner cannot write these
    files either: qrjudge/isolation.py)."""
    from qrjudge import arena, cases, checker, guard, hostwatch, specs, timing  # noqa: F401

    with contextlib.suppress(ImportError):
        import cupy  # noqa: F401  also the slow part of a prestarted judge's start-up


def arguments(argv: list[str] | None) -> argparse.Namespace:
    from qrjudge.specs import MODES

    p = argparse.ArgumentParser()
    p.add_argument("--kernel-dir", type=Path)
    p.add_argument("--mode", default="full", choices=MODES)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--baseline", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--wait", action="store_true", help="start the runner and import torch, then wait for a line "
                   "on stdin")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    isolation.protect_memory()
    # The inputs' seed comes on stdin, never on the command line, which any process that sees this one's
    # /proc entry can read; the judge's memory is not readable (non-dumpable).
    try:
        seed = int(json.loads(sys.stdin.readline())["seed"])
    except (ValueError, KeyError, TypeError):
        print("the judge reads {\"seed\": N} as its first line on stdin", file=sys.stderr)
        return 2
    from qrjudge.gpulock import GpuLock
    from qrjudge.specs import take_go

    report = Report(sys.stdout)
    t0 = time.monotonic()
    lock = GpuLock.from_env()  # a GPU shared with other evaluations: test with one runner, time with another
    alone = os.environ.get("EVOLVE_GPU_ALONE") == "1"  # or judged alone, the GPU held for the whole evaluation
    runner = Runner(args)
    timed = Runner(args) if lock is not None and not alone else None
    ctx: Context | None = None
    try:
        import torch

        load_judge()
        if args.wait:
            line = sys.stdin.readline()
            if not line:
                return 1
            take_go(line, args)  # a prestarted judge serves any mode (a confirmation in `final`)
            t0 = time.monotonic()
        compiler = scan(args)
        cuda = args.device == "cuda"
        if cuda and not torch.cuda.is_available():
            raise Verdict("crash", "no CUDA device is visible to the harness")
        ctx = Context(args, runner, report, random.Random(seed), torch, torch.device("cuda:0" if cuda else "cpu"),
                      None, compiler=compiler)
        if lock is not None and timed is not None:
            verdict = evaluate_sharing(ctx, t0, lock, timed)
        else:
            verdict = evaluate_alone(ctx, t0, lock)
    except Verdict as v:
        verdict = v
    except BaseException as exc:  # the judge's own failure must still produce a result
        verdict = Verdict("crash", f"the judge failed: {type(exc).__name__}: {exc}",
                          trace=traceback.format_exc()[-2000:])
    finally:
        for each in (runner, timed):
            if each is not None:
                each.kill()
    last = ctx.runner if ctx is not None else runner  # the runner that was working when it ended
    if verdict.status != "ok":  # the runner's last words explain it; an ok verdict does not wait for its exit
        last.drain()
        verdict.fields["log"] = last.log()
    report.final(verdict)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the verdict is written: skip interpreter and CUDA teardown

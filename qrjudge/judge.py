"""The judge: the trusted half of a QR evaluation. It never runs candidate code.

    python -m qrjudge.judge --mode MODE --seed S (--kernel-dir DIR | --baseline) [--wait]

Run by the supervisor (qrjudge/supervisor.py), it starts the runner (qrjudge/runner.py, the process that imports the
candidate), shares three GPU buffers with it (qrjudge/arena.py) and drives it call by call. For every call
it generates a fresh input from a secret seed and writes it into the shared A; afterwards it checks that the
candidate left A unchanged, and checks the candidate's outputs against it with the contract's gates
(every test; every timed call: where checking a whole call is costly, a secret sample of its matrices in
`full` mode, every matrix in `final`). It times each call with its own clock too, and rejects a candidate
whose reported times leave more unexplained than the overhead it measured on a reference function before the
candidate was loaded (the timed stage is qrjudge/timed.py's; this module drives the stages in order).

The judge is non-dumpable and the runner lives in a user namespace of its own, so the runner cannot read
or write the judge's memory or pipes. Stdout carries JSON lines only the judge writes: progress
(`{"stage": ..., "label": ...}`), then the verdict (`{"final": {...}}`). Stages raise one `Verdict`, caught
once in `main`. One call of the candidate, as every stage makes it, is qrjudge/calls.py's `Context.call`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qrjudge import isolation
from qrjudge.calls import Call, Context, judge_error, judge_reply
from qrjudge.kept import Deferred, defer_budget
from qrjudge.link import Runner
from qrjudge.timed import calibrate, compiled, measured, primeable, quiet, warm_up
from qrjudge.verdict import Report, Verdict, heartbeat

if TYPE_CHECKING:
    from qrjudge.gpulock import GpuLock

LOCK_BEAT_S = 5.0  # a progress line this often while the judge waits for the GPU's lock


# --- the stages ------------------------------------------------------------------------------------------

def start(ctx: Context, profiles: bool = True) -> str:
    """Share the buffers with the runner; returns how the runner is isolated. `profiles`: whether this runner is
    the one that runs the profile, if the evaluation asks for one (alone, the one runner; sharing, the timed one)."""
    return started(ctx, ctx.runner, go(ctx, ctx.runner, idle=True, profiles=profiles))


def go(ctx: Context, runner: Runner, idle: bool, profiles: bool) -> int | None:
    """The first half of `start`, for `runner`: the buffers (allocated on first use) sent. With `idle` false the
    GPU is not this evaluation's alone yet: the runner sets up everything but the hold, which `hold` measures.
    The runner imports torch's compiler before its snapshots where the candidate's files name it, and where it
    will run the profile: torch's profiler imports the compiler on its first use, which in the timed runner made a
    confirmation's profile 4.08 s, in its exclusive hold of the GPU, against 0.33 with the compiler imported at
    every runner's start (H200, 2026-12-05, notebook run57)."""
    from qrjudge.arena import Arena
    from qrjudge.specs import benchmarks_for, tests_for

    if ctx.arena is None:
        specs = [*tests_for(ctx.args.mode), *benchmarks_for(ctx.args.mode)]
        staged = [s.batch * s.n * s.n for s in benchmarks_for(ctx.args.mode) if primeable(s)]
        ctx.arena, ctx.handles = Arena.allocate(max(s.batch * s.n * s.n for s in specs),
                                                max(s.batch * s.n for s in specs), max(staged, default=1),
                                                ctx.args.device)
    profile = profiles and ctx.args.profile and not ctx.args.baseline  # (`timed.measured` profiles these)
    return runner.post({"op": "go", "arenas": ctx.handles, "device": ctx.args.device, "idle": idle,
                        "compiler": ctx.compiler or profile})


def started(ctx: Context, runner: Runner, nonce: int | None) -> str:
    """The second half of `start`: the runner's answer; returns how it is isolated."""
    reply = runner.reply(nonce, "at start-up")
    if not reply.get("ready"):
        judge_reply(reply, "at start-up")
    if isinstance(reply.get("setup_s"), float):  # the runner's buffers, timer and snapshots (the candidate's not in)
        ctx.timings["runner_setup_s"] = reply["setup_s"]
    parts = reply.get("setup_parts")
    if isinstance(parts, dict):  # sharing, the testing runner's set-up is in the shared hold, the timed one's beside
        prefix = "setup" if runner is ctx.runner else "timed_setup"  # the tests
        ctx.timings.update({f"{prefix}_{k}_s": float(v) for k, v in parts.items()  # (runner.Session's laps)
                            if isinstance(k, str) and k.isalpha() and isinstance(v, (int, float))})
    if isinstance(reply.get("cpu"), int):  # the CPU the runner pinned itself to (qrjudge/isolation.py)
        ctx.runner_cpu = reply["cpu"]
    take_hold(ctx, reply)
    return str(reply.get("isolation", "unknown"))


def take_hold(ctx: Context, reply: dict[str, Any]) -> None:
    if isinstance(reply.get("hold_us"), float):  # how long the GPU is held before each timed call (timing.Hold)
        ctx.hold_us = round(reply["hold_us"], 1)
        ctx.hold_error = reply.get("hold_error") or None  # why the hold could not be built (timing.CudaTimer)


def hold(ctx: Context) -> None:
    """The hold's length measured by the timed runner, now that the GPU is this evaluation's alone."""
    reply = ctx.runner.ask({"op": "hold"}, "timing the L2 flush")
    judge_error(reply, "timing the L2 flush")
    take_hold(ctx, reply)


def scan(args: argparse.Namespace) -> bool:
    """The static scan, first: it needs no GPU. Returns whether the candidate uses torch.compile's compiler."""
    from qrjudge import guard

    findings = [] if args.baseline else guard.scan(args.kernel_dir)
    if findings:
        raise Verdict("rejected", "forbidden code: " + "; ".join(findings[:8]), findings=findings[:50])
    return not args.baseline and guard.uses_compiler(args.kernel_dir)


def load(ctx: Context, timed: bool = False) -> dict[str, Any]:
    """The candidate's import in the runner, its time as `import_kernel_s` (the timed runner's: `timed_import_s`),
    the modules it makes compiled side by side (not in the timed runner, whose modules the testing runner
    compiled); returns its compile diagnostics."""
    if ctx.args.baseline:
        ctx.runner.ask({"op": "load"}, "loading torch.geqrf")
        return {}
    ctx.report.emit(stage="import", label=str(ctx.args.kernel_dir))
    with heartbeat(ctx.report, "import", str(ctx.args.kernel_dir)):
        reply = ctx.runner.ask({"op": "load", "ahead": not timed}, "importing kernel.py")
    if isinstance(reply.get("error"), dict):
        error = reply["error"]
        status = "rejected" if error.get("status") == "rejected" else "compile_error"
        raise Verdict(status, str(error.get("message", ""))[:3000], trace=str(error.get("trace", ""))[-3000:])
    if reply.get("tamper"):
        raise Verdict("rejected", f"importing kernel.py changed the harness's machinery: {reply['tamper']}")
    ctx.timings["timed_import_s" if timed else "import_kernel_s"] = float(reply.get("import_s", 0.0))
    compile_info = reply.get("compile")
    return compile_info if isinstance(compile_info, dict) else {}


def run_tests(ctx: Context) -> tuple[list[str], dict[str, float]]:
    """Every correctness test of the mode, each checked by every gate; (labels passed, worst residuals: the
    reconstruction residual, not a gate, only on the tests that check in milliseconds). The judge checks
    one test while the runner runs the next (nothing here is timed): the stage took 0.74-0.86 s on an H200
    where it had taken 1.07-1.10 (blocked_wy, docs/benchmarks-history.md, eighth pass)."""
    from qrjudge.specs import tests_for

    tests = tests_for(ctx.args.mode)
    worst = {"factor": 0.0, "orth": 0.0, "recon": 0.0}
    done: tuple[Any, Call, Any, Any] | None = None  # the last test run: spec, call, copies of H and tau
    for number, spec in enumerate(tests, 1):
        ctx.report.emit(stage="test", label=f"{number}/{len(tests)} {spec.label}")
        sent = ctx.send(spec, f"test {spec.label}")
        if done is not None:
            check_test(*done, worst)
        call = ctx.receive(sent)
        _, h, tau = ctx.arena.views(spec.batch, spec.n)
        done = (spec, call, h.clone(), tau.clone())  # copied before the next input is written (a synchronisation)
    if done is not None:
        check_test(*done, worst)
    return [s.label for s in tests], worst


def check_test(spec: Any, call: Call, h: Any, tau: Any, worst: dict[str, float]) -> None:
    from qrjudge.cases import mixed_cases
    from qrjudge.checker import check
    from qrjudge.timing import heavy_check

    verdict = check(call.a, h, tau, diagnostics=not heavy_check(spec.batch, spec.n))
    for key in worst:
        worst[key] = max(worst[key], getattr(verdict, key))
    if not verdict.ok:
        reason = verdict.reason
        if spec.case == "mixed" and verdict.matrix is not None:
            reason += f" (a {mixed_cases(spec, call.seed)[verdict.matrix]} matrix)"
        raise Verdict("incorrect", f"test {spec.label}: {reason}", failing=spec.label, worst=worst)


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


def evaluate_sharing(ctx: Context, t0: float, lock: GpuLock, timed: Runner) -> Verdict:
    """The evaluation on a GPU shared with other evaluations (qrjudge/gpulock.py): the candidate imported and
    tested by one runner under the shared lock, which is let go only once nothing of that runner is left; then,
    under the exclusive lock, a second runner (started with the first, so its imports are done, and its CUDA
    context made under the shared lock, before it holds any candidate code) calibrates the judge's clock while it
    is still ours; the lock relaxed (others' untimed work beside it, no other evaluation's timed region), it
    imports the candidate and makes each benchmark size's first call (`warm_up`); the lock exclusive again, it is
    timed, exactly as a lone evaluation's runner is; it too is gone before the lock is. Then, under the shared lock
    again, the judge checks the timed calls it kept (`Deferred`). No candidate code exists outside its judge's
    lock, so none exists while another evaluation is timed."""
    with holding(ctx, lock.shared()), lifetime(ctx, ctx.runner):
        warm(ctx, timed)
        ctx.timings["cuda_start_s"] = time.monotonic() - t0
        start(ctx, profiles=False)
        setting_up = go(ctx, timed, idle=False, profiles=True)  # its buffers, timer and snapshots while this one tests
        load(ctx)
        began = time.monotonic()
        labels, worst = run_tests(ctx)
        ctx.timings["tests_s"] = time.monotonic() - began
        compiled(ctx, quiet(ctx))
        isolated = started(ctx, timed, setting_up)
    ctx.runner, ctx.deferred = timed, Deferred(defer_budget(ctx))
    try:
        with holding(ctx, lock.exclusive()) as held, lifetime(ctx, timed):
            began = time.monotonic()
            hold(ctx)
            calibrate(ctx)
            ctx.timings["calibrate_s"] = time.monotonic() - began
            held.relax()  # the candidate in the timed runner from here: no other evaluation can be timed
            compile_info = load(ctx, timed=True)
            warm_up(ctx)
            quiet(ctx)
            with waiting(ctx):
                held.tighten()
            verdict = measured(ctx, isolated, compile_info, labels, worst)
    except Verdict as failed:
        verdict = failed
    with holding(ctx, lock.shared()):
        began = time.monotonic()
        # Alone, each of these stashes was checked where it was handed over, before anything the benchmark
        # found later: a wrong call kept before a later failure is still the verdict (`incorrect`).
        ctx.deferred.check()
    if verdict.status != "ok":
        raise verdict
    verdict.fields["timings"]["deferred_checks_s"] = round(time.monotonic() - began, 3)
    return with_lock(ctx, lock, verdict)


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


def with_lock(ctx: Context, lock: GpuLock, verdict: Verdict) -> Verdict:
    """The verdict with the GPU's lock as this evaluation held it: the wait, the holds and when its candidate's
    code existed, on the monotonic clock with its offset to the wall clock (bench/run_stages.py lines them up)."""
    verdict.fields["timings"]["lock_wait_s"] = round(ctx.timings["lock_wait_s"], 3)
    verdict.fields["gpu_lock"] = {"held": [list(h) for h in lock.held], "alive": [list(a) for a in ctx.alive],
                                  "wall": time.time() - time.monotonic()}
    return verdict


@contextlib.contextmanager
def holding(ctx: Context, hold: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
    """A hold of the GPU's lock, taken `waiting`."""
    with contextlib.ExitStack() as stack:
        with waiting(ctx):
            held = stack.enter_context(hold)
        yield held


@contextlib.contextmanager
def waiting(ctx: Context) -> Iterator[None]:
    """A wait for the GPU's lock (a hold taken, or a relaxed one made exclusive again), added to `lock_wait_s` and
    said every LOCK_BEAT_S: a judge waiting behind other evaluations (tens of seconds where many share a GPU) is not
    a stalled one (qrjudge/supervisor.py)."""
    waited = time.monotonic()
    with heartbeat(ctx.report, "lock", "waiting for the GPU", every=LOCK_BEAT_S, limit=math.inf):
        yield
    ctx.timings["lock_wait_s"] = ctx.timings.get("lock_wait_s", 0.0) + time.monotonic() - waited


@contextlib.contextmanager
def lifetime(ctx: Context, runner: Runner) -> Iterator[None]:
    """The block in which `runner` may run candidate code: at its end, however it ends (a failing test too),
    the runner is gone, before the lock around the block is let go; the span goes into `ctx.alive`."""
    began = time.monotonic()
    try:
        yield
    except BaseException:
        with contextlib.suppress(Verdict):
            runner.end()
        raise
    else:
        runner.end()
    finally:
        ctx.alive.append((began, time.monotonic()))


def warm(ctx: Context, *others: Runner) -> None:
    """The judge's and the runners' CUDA contexts (the working runner's and `others`), created at once (a
    prestarted runner touches no GPU before this: another evaluation may be timing on it); how long, `contexts_s`
    (sharing, in the shared hold: a runner still importing torch when the evaluation begins finishes here)."""
    began = time.monotonic()
    runners = (ctx.runner, *others)
    warming = [runner.post({"op": "warm", "device": ctx.args.device}) for runner in runners]
    if ctx.device.type == "cuda":
        ctx.torch.cuda.init()
    for runner, nonce in zip(runners, warming):
        judge_error(runner.reply(nonce, "starting CUDA"), "starting the runner")
    ctx.timings["contexts_s"] = time.monotonic() - began


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

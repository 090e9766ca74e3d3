"""The evaluation on a GPU shared with other evaluations (`[evaluation] per_gpu` > 1): the judge's holds of the GPU's
lock (qrjudge/gpulock.py), in order, and the record of them that goes with the verdict; the holds' helpers, which a
lone evaluation that takes the lock (`per_gpu = 1`: qrjudge/judge.py, `evaluate_alone`) uses too.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from qrjudge.calls import Context
from qrjudge.kept import Deferred, defer_budget
from qrjudge.link import Runner
from qrjudge.stages import go, hold, load, run_tests, start, started, warm
from qrjudge.timed import calibrate, compiled, measured, quiet, warm_up
from qrjudge.verdict import Verdict, heartbeat

if TYPE_CHECKING:
    from qrjudge.gpulock import GpuLock

LOCK_BEAT_S = 5.0  # a progress line this often while the judge waits for the GPU's lock


def evaluate_sharing(ctx: Context, t0: float, lock: GpuLock, timed: Runner) -> Verdict:
    """The evaluation on a GPU shared with other evaluations: the candidate imported and tested by one runner under
    the shared lock, which is let go only once nothing of that runner is left; then, under the exclusive lock, a
    second runner (started with the first, so its imports are done, and its CUDA context made under the shared lock,
    before it holds any candidate code) calibrates the judge's clock while it is still ours; the lock relaxed
    (others' untimed work beside it, no other evaluation's timed region), it imports the candidate and makes each
    benchmark size's first call (`warm_up`); the lock exclusive again, it is timed, exactly as a lone evaluation's
    runner is; it too is gone before the lock is. Then, under the shared lock again, the judge checks the timed calls
    it kept (`Deferred`). No candidate code exists outside its judge's lock, so none exists while another evaluation
    is timed. (A prestarted judge setting its runners up before its go line, under a shared hold of its own, judged
    612 candidates an hour on an H100 where this order judged 818 with a like draw of compiles, 2026-12-05, two calls,
    notebook run61 and run62: readers at random times hold the writers back, and a relaxed writer's tighten waits for
    the set-ups it let in.)"""
    with holding(ctx, lock.shared()), lifetime(ctx, ctx.runner):
        warm(ctx, timed)
        ctx.timings["cuda_start_s"] = time.monotonic() - t0
        start(ctx)
        setting_up = go(ctx, timed, idle=False)  # its buffers, timer and snapshots while this one tests
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

"""The judge: the trusted half of a QR evaluation. It never runs candidate code.

    python -m qrjudge.judge --mode MODE --seed S (--kernel-dir DIR | --baseline) [--wait]

Run by the supervisor (qrjudge/supervisor.py), it starts the runner (qrjudge/runner.py, the process that imports the
candidate), shares three GPU buffers with it (qrjudge/arena.py) and drives it call by call. For every call
it generates a fresh input from a secret seed and writes it into the shared A; afterwards it checks that the
candidate left A unchanged, and checks the candidate's outputs against it with the contract's gates
(every test; every timed call: where checking a whole call is costly, a secret sample of its matrices in
`full` mode, every matrix in `final`). It times each call with its own clock too, and rejects a candidate
whose reported times leave more unexplained than the overhead it measured on a reference function before the
candidate was loaded.

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
import statistics
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qrjudge import isolation
from qrjudge.calls import Call, Context, judge_error, judge_reply
from qrjudge.kept import Deferred, Stash, defer_budget
from qrjudge.link import Runner
from qrjudge.verdict import Report, Verdict, heartbeat

if TYPE_CHECKING:
    from qrjudge.gpulock import GpuLock
    from qrjudge.timing import Plan

# What the judge's clock may see per call beyond the calibrated overhead: (us, fraction of the reported time),
# compared on the fastest call. Set by the spread honest kernels show between their fastest call and the fastest
# calibration call (docs/benchmarks.md, "The judge"), with room: the judge must never reject an honest kernel.
# What it leaves a runner subverted from within is docs/QR_CONTRACT.md's "Times". The CPU self-test's pipes wait
# on a shared scheduler, so a loaded CI machine needs a far larger slack there; its scores mean nothing anyway.
WALL_SLACK = {"cuda": (3000.0, 0.05), "cpu": (20000.0, 0.5)}
# Timed calls on inputs up to this size are primed (Context.call). Each call is a round trip between two
# processes, with the judge's GPU work (input, checks) in the gap; a call on a small input, which mostly times
# how fast the host launches its kernels, took up to twice as long after such a gap on an H200 as in a loop of
# calls in one process, the way the contest times it (20x32: 55-70 us in a loop, 90-180 us unprimed). Larger
# inputs cost more to hand over through the host than priming saves (40x176, 5 MB: +2-3%; docs/benchmarks-history.md).
# EVOLVE_PRIME_BYTES=0 turns priming off (for measuring what it changes).
PRIME_BYTES = int(os.environ.get("EVOLVE_PRIME_BYTES", str(1 << 20)))
# Calls per size at calibration, the fastest counting: (primed sizes, the rest). A small shape's call costs well
# under a millisecond, and its fastest call is what a misreport is measured against; a large shape's costs up
# to 20 ms (five of every size took 0.42-0.58 s on an H200).
CALIBRATION_CALLS = (8, 3)
LOCK_BEAT_S = 5.0  # a progress line this often while the judge waits for the GPU's lock


# --- the stages ------------------------------------------------------------------------------------------

def start(ctx: Context) -> str:
    """Share the buffers with the runner; returns how the runner is isolated."""
    return started(ctx, ctx.runner, go(ctx, ctx.runner, idle=True))


def go(ctx: Context, runner: Runner, idle: bool) -> int | None:
    """The first half of `start`, for `runner`: the buffers (allocated on first use) sent. With `idle` false the
    GPU is not this evaluation's alone yet: the runner sets up everything but the hold, which `hold` measures."""
    from qrjudge.arena import Arena
    from qrjudge.specs import benchmarks_for, tests_for

    if ctx.arena is None:
        specs = [*tests_for(ctx.args.mode), *benchmarks_for(ctx.args.mode)]
        staged = [s.batch * s.n * s.n for s in benchmarks_for(ctx.args.mode) if primeable(s)]
        ctx.arena, ctx.handles = Arena.allocate(max(s.batch * s.n * s.n for s in specs),
                                                max(s.batch * s.n for s in specs), max(staged, default=1),
                                                ctx.args.device)
    return runner.post({"op": "go", "arenas": ctx.handles, "device": ctx.args.device, "idle": idle})


def started(ctx: Context, runner: Runner, nonce: int | None) -> str:
    """The second half of `start`: the runner's answer; returns how it is isolated."""
    reply = runner.reply(nonce, "at start-up")
    if not reply.get("ready"):
        judge_reply(reply, "at start-up")
    if isinstance(reply.get("setup_s"), float):  # the runner's buffers, timer and snapshots (the candidate's not in)
        ctx.timings["runner_setup_s"] = reply["setup_s"]
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


def primeable(spec: Any) -> bool:
    return bool(spec.batch * spec.n * spec.n * 4 <= PRIME_BYTES)


def calibrate(ctx: Context) -> None:
    """The judge-clock overhead of a call (flush, copies, pipes) per benchmark shape, primed where its timed
    calls will be, measured on a reference function while the runner is still ours. The overhead depends on
    the input's size, not its case, so shapes of one size (the four 640x512 cases, the three 60x1024) share
    one measurement."""
    from qrjudge.specs import benchmarks_for, by_size

    overhead = {}
    for size, spec in by_size(benchmarks_for(ctx.args.mode)).items():
        gaps = []
        for _ in range(CALIBRATION_CALLS[0 if primeable(spec) else 1]):
            call = ctx.call(spec, "calibrating", primeable(spec), reference=True, timed=True, flush=True)
            gaps.append(call.wall_us - call.reply["event_us"])
        overhead[size] = min(gaps)
    for spec in benchmarks_for(ctx.args.mode):
        ctx.overhead_us[spec.label] = overhead[spec.batch, spec.n]


def scan(args: argparse.Namespace) -> None:
    """The static scan, first: it needs no GPU."""
    from qrjudge import guard

    findings = [] if args.baseline else guard.scan(args.kernel_dir)
    if findings:
        raise Verdict("rejected", "forbidden code: " + "; ".join(findings[:8]), findings=findings[:50])


def load(ctx: Context, timing: str = "import_kernel_s") -> dict[str, Any]:
    """The candidate's import in the runner, its time as `timing`; returns its compile diagnostics."""
    if ctx.args.baseline:
        ctx.runner.ask({"op": "load"}, "loading torch.geqrf")
        return {}
    ctx.report.emit(stage="import", label=str(ctx.args.kernel_dir))
    with heartbeat(ctx.report, "import", str(ctx.args.kernel_dir)):
        reply = ctx.runner.ask({"op": "load"}, "importing kernel.py")
    if isinstance(reply.get("error"), dict):
        error = reply["error"]
        status = "rejected" if error.get("status") == "rejected" else "compile_error"
        raise Verdict(status, str(error.get("message", ""))[:3000], trace=str(error.get("trace", ""))[-3000:])
    if reply.get("tamper"):
        raise Verdict("rejected", f"importing kernel.py changed the harness's machinery: {reply['tamper']}")
    ctx.timings[timing] = float(reply.get("import_s", 0.0))
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


def time_shape(ctx: Context, spec: Any, plan: Plan) -> dict[str, Any]:
    """One round of a shape: warm up, then timed calls on fresh inputs until `plan` says the mean is stable;
    every kept output is checked."""
    from qrjudge import hostwatch
    from qrjudge.timing import checked_matrices, enough, floor_us, min_runs

    where = f"benchmark {spec.label}"
    ctx.report.emit(stage="bench", label=spec.label)
    warmup_s = 0.0
    if ctx.warm_failed is not None and ctx.warm_failed[0] == (spec.batch, spec.n):
        raise ctx.warm_failed[1]  # this size's first call failed in `warm_up`
    if ctx.last_timed != (spec.batch, spec.n):  # the same size timed last (640x512's cases) is warm already
        began = time.perf_counter()
        ctx.call(spec, where)  # warm-up: compilation, workspaces, graph capture stay out of the timing
        warmup_s = time.perf_counter() - began
    primed = primeable(spec)
    sample, stash = checked_matrices(plan, spec.batch, spec.n), Stash(ctx, spec)
    events: list[float] = []
    walls: list[float] = []
    gaps: list[float] = []
    host = hostwatch.sample(ctx.runner.pid, probe=False)  # the judge's loop runs once, after the calls
    started = time.monotonic()
    kept = None  # what the judge kept of the previous call
    while not enough(events, plan, started, min_runs(plan, spec.batch, sample)):
        if kept is not None and not stash.unchanged(kept):
            raise Verdict("rejected", f"{where}: the outputs changed after the call was reported finished")
        call = ctx.call(spec, where, primed, timed=True, flush=True)
        rows = None if sample == spec.batch else ctx.rng.sample(range(spec.batch), sample)  # drawn after the call
        kept = stash.add(len(events) + 1, call.a, rows)
        events.append(call.reply["event_us"])
        walls.append(call.reply["wall_us"])
        gaps.append(call.wall_us - call.reply["event_us"])
    ctx.last_timed = (spec.batch, spec.n)
    host_during = hostwatch.between(host, hostwatch.sample(ctx.runner.pid))
    stash.settle()
    median = statistics.median(events)
    unexplained = clocks_agree(where, events, walls, min(gaps) - ctx.overhead_us.get(spec.label, 0.0),
                               WALL_SLACK[ctx.args.device], host_during)
    mean = statistics.fmean(events)
    return {"shape": spec.label, "batch": spec.batch, "n": spec.n, "case": spec.case, "cond": spec.cond,
            "mean_us": round(mean, 3), "std_us": round(statistics.pstdev(events), 3),
            "median_us": round(median, 3), "min_us": round(min(events), 3), "runs": len(events),
            "checked": stash.kept, "checked_matrices": sample, "primed": primed,
            "wall_median_us": round(statistics.median(walls), 3),
            "judge_overhead_us": round(statistics.median(gaps), 1), "unexplained_us": round(unexplained, 1),
            "floor_us": round(floor_us(spec.batch, spec.n), 2), "host": host_during,
            "warmup_ms": round(warmup_s * 1e3, 2), "timed_s": sum(events) / 1e6}


def clocks_agree(where: str, events: list[float], walls: list[float], unexplained: float,
                 slack: tuple[float, float], host: dict[str, Any]) -> float:
    """The judge's clock against the times the runner reported for a shape's timed calls; returns the time per
    call that the judge cannot explain (its fastest call less the fastest calibration call: a runner that
    misreports shifts every call, while the noise, wake-ups and clock changes, only ever adds, so minima
    separate the two best). Too much of it, or a device busy long after the timed region, is a rejection,
    unless the runner and the judge waited for a CPU (hostwatch: other processes had it) as long a call as the
    excess: an honest runner on a busy host looks the same, so the evaluation ends as a crash that says so and
    accuses no one (six evaluations at once on the H200's 16 cores rejected an honest kernel, docs/benchmarks.md)."""
    median = statistics.median(events)
    if unexplained > max(slack[0], slack[1] * median):
        excess, seen = unexplained, (f"the judge's clock saw {unexplained:.0f} us per call more than the candidate's "
                                     f"process reported ({median:.0f} us)")
        why = "its clock or its timing was tampered with"
    elif statistics.median(walls) > 2 * median + 1000:
        excess = statistics.median(walls) - median
        seen = (f"the device stayed busy long after the timed region ended ({statistics.median(walls):.0f} us wall "
                f"vs {median:.0f} us on the current stream)")
        why = "work escaped the timed stream"
    else:
        return unexplained
    waited = host.get("waited_ms")
    if isinstance(waited, (int, float)) and waited * 1000 / len(events) >= excess:
        raise Verdict("crash", f"{where}: {seen}, but the host was too busy to tell tampering from waiting (the "
                      f"runner and the judge waited {waited * 1000 / len(events):.0f} us a call for a CPU): judge it "
                      "again with fewer evaluations at once on this host (`evolve rejudge`)",
                      retry="the host was too busy to check its clock")  # the engine judges it once more
    raise Verdict("rejected", f"{where}: {seen}: {why}")


def fastest_round(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """A shape timed in several rounds: the fastest round's figures, every round's calls and checks counted
    (they all count towards catching a wrong kernel), and every round's mean for the record."""
    best = min(rounds, key=lambda r: r["mean_us"])
    return {**best, "runs": sum(r["runs"] for r in rounds), "checked": sum(r["checked"] for r in rounds),
            "timed_s": sum(r["timed_s"] for r in rounds), "round_means_us": [r["mean_us"] for r in rounds],
            "warmup_ms": round(sum(r["warmup_ms"] for r in rounds), 2)}


def benchmark(ctx: Context) -> tuple[list[dict[str, Any]], float]:
    """Every benchmark shape of the mode, in order; a short one (timing.SHORT_US) again in later rounds spread
    over the rest, scored by its fastest round. (Per-shape results, probability of catching a kernel that
    is wrong on 10% of timed calls.)"""
    from qrjudge.specs import benchmarks_for
    from qrjudge.timing import PLANS, SHORT_US, catch_probability, round_plan, rounds_at

    plan = PLANS[ctx.args.mode]
    per_round = round_plan(plan)  # the plan itself where there is one round
    specs = benchmarks_for(ctx.args.mode)
    rounds: list[list[dict[str, Any]]] = []
    checkpoints = rounds_at(len(specs), plan.rounds)
    for number, spec in enumerate(specs, 1):
        rounds.append([time_shape(ctx, spec, per_round)])
        for _ in range(checkpoints.count(number)):
            for shape_rounds, earlier in zip(rounds, specs):
                if shape_rounds[0]["mean_us"] < SHORT_US:
                    shape_rounds.append(time_shape(ctx, earlier, per_round))
    shapes = [fastest_round(r) for r in rounds]
    reply = ctx.runner.ask({"op": "verify"}, "after the benchmark")
    if reply.get("tamper"):
        raise Verdict("rejected", f"the candidate changed the harness's machinery: {reply['tamper']}")
    if ctx.deferred is None:  # alone, the one runner's count; sharing, the tested runner's (`compiled`)
        compiled(ctx, reply)
    return shapes, catch_probability([(s["runs"], s["checked_matrices"] / s["batch"]) for s in shapes])


def compiled(ctx: Context, reply: dict[str, Any]) -> None:
    """What the runner says the compile cache did for it (qrjudge/nvrtc_cache.py: shown, never believed). Sharing,
    the runner that tests is the one that compiles; the timed one finds its modules in their CuPy cache."""
    said = reply.get("nvrtc_cache")
    ctx.nvrtc_cache = {k: v if isinstance(v, (int, float)) else str(v)[:200] for k, v in said.items()
                       if k in ("hits", "compiled", "foreseen", "seconds", "why")} if isinstance(said, dict) else None


def quiet(ctx: Context) -> dict[str, Any]:
    """The runner's compile server guesses no more (qrjudge/foresight.py): what it foresaw for the tests or the
    warm-ups is not compiling beside the timed calls that follow. The reply says what the cache did for it."""
    return ctx.runner.ask({"op": "compiles"}, "before the timed calls")


def profile(ctx: Context) -> dict[str, Any]:
    """Where each benchmark shape's time goes, for the model that improves the candidate (`--profile`): one
    more call per shape, after the scored ones, on a fresh input, under torch's profiler in the runner; per
    shape the kernels that took the most device time, with their launches and share. Never scored (the runner
    is the candidate's), and its cost is the evaluation's `profile_s`; a profile that fails is an `error` in it,
    not a failed candidate, except that a rejection (a refused call, a changed harness) still rejects."""
    from qrjudge.specs import benchmarks_for

    shapes: list[dict[str, Any]] = []
    for spec in benchmarks_for(ctx.args.mode):
        where = f"profile {spec.label}"
        ctx.report.emit(stage="profile", label=spec.label)
        try:
            reply = ctx.runner.reply(ctx.send(spec, where, op="profile").nonce, where)
            judge_error(reply, where)
        except Verdict as failed:
            # The score stands without a profile (a profiler can fail where timing did not), but a refused
            # library call or a changed harness is cheating wherever it happens.
            if failed.status == "rejected":
                raise
            return {"shapes": shapes, "device": ctx.args.device, "error": f"{failed.status}: {failed.error}"[:500]}
        kernels = [k for k in reply.get("kernels", []) if isinstance(k, dict)]
        total = sum(float(k.get("us", 0)) for k in kernels) or 1.0
        top = [{"name": str(k.get("name", "?"))[:120], "launches": int(k.get("launches", 0)),
                "us": round(float(k.get("us", 0)), 2), "share": round(float(k.get("us", 0)) / total, 4)}
               for k in kernels[:8]]
        shapes.append({"shape": spec.label, "total_us": round(total, 2), "kernels": top})
    return {"shapes": shapes, "device": ctx.args.device}


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
        start(ctx)
        setting_up = go(ctx, timed, idle=False)  # its buffers, timer and snapshots while this runner tests
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
            compile_info = load(ctx, "timed_import_s")
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
    verdict.fields["timings"].update(lock_wait_s=round(ctx.timings["lock_wait_s"], 3),
                                     deferred_checks_s=round(time.monotonic() - began, 3))
    verdict.fields["gpu_lock"] = {"held": [list(h) for h in lock.held], "alive": [list(a) for a in ctx.alive],
                                  "wall": time.time() - time.monotonic()}  # the spans' clock to the wall clock
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


def warm_up(ctx: Context) -> None:
    """Each benchmark size's first call in the timed runner (the candidate's compilation, workspaces, graph
    captures: the warm-ups' costly part) while the GPU's lock is relaxed: others' untimed work may run beside them,
    no other evaluation is timed. `time_shape` still makes its own warm-up call right before a shape's timed calls,
    under the exclusive lock, so that what precedes them is what it was (that call now finds the size warm). A
    failing call (a rejection too) ends the warm-ups and is the verdict where `time_shape` reaches its size, as it
    would have been there alone: an earlier shape's wrong timed call is still found first."""
    from qrjudge.specs import benchmarks_for, by_size

    began = time.monotonic()
    for size, spec in by_size(benchmarks_for(ctx.args.mode)).items():
        ctx.report.emit(stage="warm-up", label=spec.label)
        try:
            ctx.call(spec, f"benchmark {spec.label}")
        except Verdict as failed:
            ctx.warm_failed = (size, failed)
            break
    ctx.timings["warm_up_s"] = time.monotonic() - began


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
    prestarted runner touches no GPU before this: another evaluation may be timing on it)."""
    runners = (ctx.runner, *others)
    warming = [runner.post({"op": "warm", "device": ctx.args.device}) for runner in runners]
    if ctx.device.type == "cuda":
        ctx.torch.cuda.init()
    for runner, nonce in zip(runners, warming):
        judge_error(runner.reply(nonce, "starting CUDA"), "starting the runner")


def measured(ctx: Context, isolated: str, compile_info: dict[str, Any], labels: list[str],
             worst: dict[str, float]) -> Verdict:
    """The benchmark and (asked for) the profile of a loaded, tested candidate, and the verdict."""
    from qrjudge.timing import geomean

    began, before = time.monotonic(), dict(ctx.spent)
    shapes, catch = benchmark(ctx)
    ctx.timings["bench_s"] = time.monotonic() - began
    # of which (`Context.spent`): inputs made and written; prime calls; the runner until its `done` (the timed calls
    # within it, and the warm-ups, pipes, flush and hold); its checks after `done`; the rest is the judge's own
    # (comparisons, kept outputs, checks); across them, the warm-up calls whole (each shape's `warmup_ms`)
    for key in ctx.spent:
        ctx.timings[f"bench_{key}_s"] = ctx.spent[key] - before[key]
    ctx.timings["timed_kernel_s"] = sum(s.pop("timed_s") for s in shapes)
    ctx.timings["bench_warmup_s"] = sum(s["warmup_ms"] for s in shapes) / 1e3
    flags = [f"{s['shape']}: {s['mean_us']:.1f} us is below the physical floor {s['floor_us']:.1f} us"
             for s in shapes if s["mean_us"] < s["floor_us"]]
    profiled = None
    if ctx.args.profile and not ctx.args.baseline:
        began = time.monotonic()
        profiled = profile(ctx)
        ctx.timings["profile_s"] = time.monotonic() - began
    return Verdict("ok", score=round(geomean([s["mean_us"] for s in shapes]), 3), unit="us", mode=ctx.args.mode,
                   shapes=shapes, tests={"passed": len(labels), "total": len(labels), "labels": labels},
                   worst=worst, compile=compile_info, flags=flags,
                   gpu=gpu_fingerprint(ctx.torch) if ctx.args.device == "cuda" else {"name": "cpu self-test"},
                   catch_probability=round(catch, 6), runner_isolation=isolated, runner_cpu=ctx.runner_cpu,
                   hold_us=ctx.hold_us, hold_error=ctx.hold_error, nvrtc_cache=ctx.nvrtc_cache,
                   timings={k: round(v, 3) for k, v in ctx.timings.items()}, baseline=bool(ctx.args.baseline),
                   profile=profiled)


def load_judge() -> None:
    """Every module the judge runs, imported now, before the runner is asked to import the candidate: nothing
    the judge executes is read from disk after candidate code could have run (the runner cannot write these
    files either: qrjudge/isolation.py)."""
    from qrjudge import arena, cases, checker, guard, hostwatch, specs, timing  # noqa: F401

    with contextlib.suppress(ImportError):
        import cupy  # noqa: F401  also the slow part of a prestarted judge's start-up


def gpu_fingerprint(torch: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    props = torch.cuda.get_device_properties(0)
    info.update(name=props.name, sms=props.multi_processor_count, memory_gib=round(props.total_memory / 2**30, 1))
    try:
        import cupy

        info["cupy"] = cupy.__version__
        v = cupy.cuda.runtime.driverGetVersion()
        info["driver_cuda"] = f"{v // 1000}.{v % 1000 // 10}"
    except Exception:  # the fingerprint is informative only
        pass
    return info


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
    runner = Runner(args)
    timed = Runner(args) if lock is not None else None
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
        scan(args)
        cuda = args.device == "cuda"
        if cuda and not torch.cuda.is_available():
            raise Verdict("crash", "no CUDA device is visible to the harness")
        ctx = Context(args, runner, report, random.Random(seed), torch, torch.device("cuda:0" if cuda else "cpu"),
                      None)
        if lock is not None and timed is not None:
            verdict = evaluate_sharing(ctx, t0, lock, timed)
        else:
            warm(ctx)
            ctx.timings["cuda_start_s"] = time.monotonic() - t0  # the scan and both processes' CUDA contexts
            verdict = evaluate(ctx, t0)
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

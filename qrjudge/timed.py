"""The judge's timed stage: the clock calibrated, the warm-ups, each benchmark shape's timed calls and their checks,
the judge's clock held against the times the runner reports, and the verdict of a tested candidate (`measured`).

qrjudge/judge.py drives the stages in order (alone, or on a shared GPU under its lock) and calls these; the
contract's numbers they follow (plans, the L2 flush, the hold, the stopping rule, the timers) are qrjudge/timing.py's.
Nothing here runs candidate code: one call of it, as every stage makes it, is qrjudge/calls.py's `Context.call`.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import TYPE_CHECKING, Any

from qrjudge.calls import Context, judge_error
from qrjudge.kept import Stash
from qrjudge.verdict import Verdict

if TYPE_CHECKING:
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


def primeable(spec: Any) -> bool:
    return bool(spec.batch * spec.n * spec.n * 4 <= PRIME_BYTES)


def calibrate(ctx: Context) -> None:
    """The judge-clock overhead of a call (flush, copies, pipes) per benchmark shape, primed where its timed
    calls will be, measured on a reference function while the runner is still ours. The overhead depends on
    the input's size, not its case, so shapes of one size (the four 640x512 cases, the three 60x1024) share
    one measurement."""
    from qrjudge.specs import benchmarks_for, by_size

    measured = {}  # size -> (the judge's clock over the events: the fastest; the runner's wall over them: median)
    for size, spec in by_size(benchmarks_for(ctx.args.mode)).items():
        gaps, walls = [], []
        for _ in range(CALIBRATION_CALLS[0 if primeable(spec) else 1]):
            call = ctx.call(spec, "calibrating", primeable(spec), reference=True, timed=True, flush=True)
            gaps.append(call.wall_us - call.reply["event_us"])
            walls.append(call.reply["wall_us"] - call.reply["event_us"])
        measured[size] = min(gaps), statistics.median(walls)
    for spec in benchmarks_for(ctx.args.mode):
        ctx.overhead_us[spec.label], ctx.wall_overhead_us[spec.label] = measured[spec.batch, spec.n]


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
    events: list[float] = []  # what the score is made of: `timed_us` of each call
    reports: list[float] = []  # what the runner said of each call (its events; on a GPU the same as `events`)
    walls: list[float] = []
    gaps: list[float] = []
    host = hostwatch.sample(ctx.runner.pid, probe=False)  # the judge's loop runs once, after the calls
    started = time.monotonic()
    kept = None  # what the judge kept of the previous call, taken at its `done`

    def keep(sent: Any) -> Any:
        rows = None if sample == spec.batch else ctx.rng.sample(range(spec.batch), sample)  # drawn after the call
        return stash.add(len(events) + 1, sent.a, rows)

    while not enough(events, plan, started, min_runs(plan, spec.batch, sample)):
        if kept is not None and not stash.unchanged(kept):
            raise Verdict("rejected", f"{where}: the outputs changed after the call was reported finished")
        call = ctx.call(spec, where, primed, keep, timed=True, flush=True)
        kept = call.kept
        reports.append(call.reply["event_us"])
        events.append(timed_us(ctx, spec, call.wall_us, call.reply["event_us"]))
        walls.append(call.reply["wall_us"])
        gaps.append(call.wall_us - call.reply["event_us"])
    ctx.last_timed = (spec.batch, spec.n)
    host_during = hostwatch.between(host, hostwatch.sample(ctx.runner.pid))
    stash.settle()
    median = statistics.median(events)
    unexplained = clocks_agree(where, reports, walls, min(gaps) - ctx.overhead_us.get(spec.label, 0.0),
                               WALL_SLACK[ctx.args.device], host_during, ctx.wall_overhead_us.get(spec.label, 0.0))
    mean = statistics.fmean(events)
    return {"shape": spec.label, "batch": spec.batch, "n": spec.n, "case": spec.case, "cond": spec.cond,
            "mean_us": round(mean, 3), "std_us": round(statistics.pstdev(events), 3),
            "median_us": round(median, 3), "min_us": round(min(events), 3), "runs": len(events),
            "checked": stash.kept, "checked_matrices": sample, "primed": primed,
            "reported_median_us": round(statistics.median(reports), 3),
            "wall_median_us": round(statistics.median(walls), 3),
            "judge_overhead_us": round(statistics.median(gaps), 1), "unexplained_us": round(unexplained, 1),
            "floor_us": round(floor_us(spec.batch, spec.n), 2), "host": host_during,
            "warmup_ms": round(warmup_s * 1e3, 2), "timed_s": sum(events) / 1e6}


def timed_us(ctx: Context, spec: Any, judge_us: float, reported_us: float) -> float:
    """A timed call's time as the score counts it. On a GPU the runner's CUDA events: the work is queued, and only
    events on its stream see it (what the judge's clock makes of them is `clocks_agree`'s). On the CPU the work is the
    call itself, which the judge's own clock sees whole from another process: there the score is that clock less the
    overhead calibrated on the reference function, and the runner's report, a clock that native code in the
    candidate's process can restart (tests/cheats/frames_clock.py), is only compared with it."""
    if ctx.args.device == "cuda":
        return reported_us
    return max(judge_us - ctx.overhead_us.get(spec.label, 0.0), 1e-3)


def clocks_agree(where: str, events: list[float], walls: list[float], unexplained: float,
                 slack: tuple[float, float], host: dict[str, Any], wall_overhead: float = 0.0) -> float:
    """The judge's clock against the times the runner reported for a shape's timed calls; returns the time per
    call that the judge cannot explain (its fastest call less the fastest calibration call: a runner that
    misreports shifts every call, while the noise, wake-ups and clock changes, only ever adds, so minima
    separate the two best). Too much of it, or a device busy long after the timed region (the runner's wall clock
    over its events beyond what it was for the reference function in calibration, `wall_overhead`: on a slow host
    an honest 20x32 call's was 0.9-1.4 ms), is a rejection,
    unless the runner and the judge waited for a CPU (hostwatch: other processes had it) as long a call as the
    excess: an honest runner on a busy host looks the same, so the evaluation ends as a crash that says so and
    accuses no one (six evaluations at once on the H200's 16 cores rejected an honest kernel, docs/benchmarks.md)."""
    median = statistics.median(events)
    if unexplained > max(slack[0], slack[1] * median):
        excess, seen = unexplained, (f"the judge's clock saw {unexplained:.0f} us per call more than the candidate's "
                                     f"process reported ({median:.0f} us)")
        why = "its clock or its timing was tampered with"
    elif statistics.median(walls) > 2 * median + 1000 + wall_overhead:
        excess = statistics.median(walls) - median - wall_overhead
        seen = (f"the device stayed busy long after the timed region ended ({statistics.median(walls):.0f} us wall "
                f"vs {median:.0f} us on the current stream; the reference's wall {wall_overhead:.0f} us over its "
                "events in calibration)")
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
    if ctx.mps:
        flags.append("timed under MPS, which the contest does not use: the seed's small batches took 3-4% longer "
                     "there (docs/benchmarks.md)")
    profiled = None
    if ctx.args.profile and not ctx.args.baseline:
        began = time.monotonic()
        profiled = profile(ctx)
        ctx.timings["profile_s"] = time.monotonic() - began
    return Verdict("ok", score=round(geomean([s["mean_us"] for s in shapes]), 3), unit="us", mode=ctx.args.mode,
                   shapes=shapes, tests={"passed": len(labels), "total": len(labels), "labels": labels},
                   worst=worst, compile=compile_info, flags=flags,
                   gpu={**gpu_fingerprint(ctx.torch), "mps": ctx.mps} if ctx.args.device == "cuda"
                   else {"name": "cpu self-test"},
                   catch_probability=round(catch, 6), runner_isolation=isolated, runner_cpu=ctx.runner_cpu,
                   hold_us=ctx.hold_us, hold_error=ctx.hold_error, nvrtc_cache=ctx.nvrtc_cache,
                   timings={k: round(v, 3) for k, v in ctx.timings.items()}, baseline=bool(ctx.args.baseline),
                   profile=profiled)


def profile(ctx: Context) -> dict[str, Any]:
    """Where each benchmark shape's time goes, for the model that improves the candidate (`--profile`): one
    more call per shape, after the scored ones, on a fresh input, under torch's profiler in the runner; per
    shape the kernels that took the most device time, with their launches and share. Never scored (the runner
    is the candidate's), and its cost is the evaluation's `profile_s`; a profile that fails is an `error` in it,
    not a failed candidate, except that a rejection (a refused call, a changed harness) still rejects."""
    from qrjudge.specs import benchmarks_for

    shapes: list[dict[str, Any]] = []
    compiler = False
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
        compiler = compiler or reply.get("compiler") is True
    # whether torch's compiler was in the runner then (a profile needs none: qrjudge/runner.py, `Session.profile`)
    return {"shapes": shapes, "device": ctx.args.device, "compiler_imported": compiler}


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

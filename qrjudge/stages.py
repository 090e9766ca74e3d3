"""The judge's stages before the timed one (qrjudge/timed.py's): the runners' CUDA contexts, their start and set-up,
the static scan, the candidate's import, the correctness tests. Each raises one `Verdict`; qrjudge/judge.py keeps
their order alone, qrjudge/sharing.py on a GPU shared with other evaluations.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from qrjudge.calls import Call, Context, judge_error, judge_reply
from qrjudge.link import Runner
from qrjudge.timed import primeable
from qrjudge.verdict import Verdict, heartbeat


def start(ctx: Context) -> str:
    """Share the buffers with the runner; returns how the runner is isolated."""
    return started(ctx, ctx.runner, go(ctx, ctx.runner, idle=True))


def go(ctx: Context, runner: Runner, idle: bool) -> int | None:
    """The first half of `start`, for `runner`: the buffers (allocated on first use) sent. With `idle` false the
    GPU is not this evaluation's alone yet: the runner sets up everything but the hold, which `hold` measures.
    The runner imports torch's compiler before its snapshots where the candidate's files name it (a profile needs
    none: qrjudge/runner.py, `Session.profile`)."""
    from qrjudge.arena import Arena
    from qrjudge.specs import benchmarks_for, tests_for

    if ctx.arena is None:
        specs = [*tests_for(ctx.args.mode), *benchmarks_for(ctx.args.mode)]
        staged = [s.batch * s.n * s.n for s in benchmarks_for(ctx.args.mode) if primeable(s)]
        ctx.arena, ctx.handles = Arena.allocate(max(s.batch * s.n * s.n for s in specs),
                                                max(s.batch * s.n for s in specs), max(staged, default=1),
                                                ctx.args.device)
    return runner.post({"op": "go", "arenas": ctx.handles, "device": ctx.args.device, "idle": idle,
                        "compiler": ctx.compiler})


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
        reply = runner.reply(nonce, "starting CUDA")
        judge_error(reply, "starting the runner")
        ctx.mps = ctx.mps or reply.get("mps") is True  # (said before any candidate code exists: believed)
    ctx.timings["contexts_s"] = time.monotonic() - began

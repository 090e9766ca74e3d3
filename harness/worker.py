"""The worker: loads one candidate in a fresh process, checks it, times it, and reports.

    python -m harness.worker --kernel-dir DIR --mode MODE --seed S --events FILE [--baseline]

Run by the supervisor (harness/qr.py), never directly by the engine. Progress and the final result are
JSON lines appended to FILE, so that the supervisor knows the last stage even if this process hangs or
dies; whatever the candidate prints goes to this process's stdout, which the supervisor keeps away from
its own result line.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

T0 = time.monotonic()


class Events:
    def __init__(self, path: Path) -> None:
        self.file = path.open("a", encoding="utf-8")

    def emit(self, **record: Any) -> None:
        self.file.write(json.dumps(record, default=str) + "\n")
        self.file.flush()
        if "stage" in record:
            print(f"[harness] {record['stage']}: {record.get('label', '')}", file=sys.stderr, flush=True)

    def final(self, status: str, **fields: Any) -> None:
        self.emit(final={"status": status, **fields})


ESCAPED = ("the outputs changed after custom_kernel returned: work left running on another stream was not "
           "joined to the current stream")


def snapshot_outputs(out: Any) -> Any:
    """Copies of the outputs made on the current stream before any synchronisation: if the candidate left
    work running elsewhere, they differ from the outputs once the device is synchronised."""
    return (out[0].clone(), out[1].clone())


def escaped(snap: Any, out: Any) -> bool:
    import torch

    return not (torch.equal(snap[0], out[0]) and torch.equal(snap[1], out[1]))


def classify(exc: BaseException) -> tuple[str, str]:
    """(status, message) for an exception raised by candidate code."""
    from harness.guard import GuardError

    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0][:400] if str(exc).strip() else name
    if isinstance(exc, GuardError):
        return "rejected", text
    if "CompileException" in name:
        return "compile_error", str(exc)[-3000:]
    if "OutOfMemory" in name or "out of memory" in text.lower():
        return "crash", f"out of GPU memory: {text}"
    if "illegal" in text.lower() or "CUDA error" in text or "cudaError" in text or "CUDA_ERROR" in text:
        return "crash", f"CUDA error (the context is lost): {text}"
    return "crash", f"{name}: {text}"


def load_candidate(kernel_dir: Path) -> Any:
    spec = importlib.util.spec_from_file_location("candidate_kernel", kernel_dir / "kernel.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"{kernel_dir}/kernel.py not found")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(kernel_dir))
    spec.loader.exec_module(module)
    if not callable(getattr(module, "custom_kernel", None)):
        raise AttributeError("kernel.py defines no custom_kernel(A)")
    return module


def gpu_fingerprint() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    props = torch.cuda.get_device_properties(0)
    info.update(name=props.name, sms=props.multi_processor_count, memory_gib=round(props.total_memory / 2**30, 1))
    try:
        import cupy

        info["cupy"] = cupy.__version__
        v = cupy.cuda.runtime.driverGetVersion()
        info["driver_cuda"] = f"{v // 1000}.{v % 1000 // 10}"
    except Exception:  # cupy is optional for the baseline
        pass
    return info


def floor_us(batch: int, n: int) -> float:
    """A physical floor per call: split-TF32 tensor-core arithmetic (3 passes at ~410 TFLOP/s) or one read
    of A and one write of H at the H200's 4.8 TB/s, whichever is larger (docs/QR_CONTRACT.md)."""
    flops = batch * 4.0 * n**3 / 3.0
    return max(flops * 3 / 410e12, batch * n * n * 8 / 4.8e12) * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kernel-dir", type=Path)
    p.add_argument("--mode", default="full", choices=("quick", "full", "final"))
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--events", type=Path, required=True)
    p.add_argument("--baseline", action="store_true")
    p.add_argument("--wait", action="store_true", help="import torch, then wait for a line on stdin")
    args = p.parse_args(argv)
    ev = Events(args.events)
    t0 = T0
    if args.wait:
        import torch  # noqa: F401  the slow part of start-up, done before the candidate exists

        with contextlib.suppress(ImportError):
            import cupy  # noqa: F401
        go = sys.stdin.readline()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the candidate reads nothing from its caller
        if not go:
            return 1
        t0 = time.monotonic()
    try:
        return run(args, ev, t0)
    except BaseException as exc:  # the harness's own failure must still produce a result
        status, message = classify(exc)
        ev.final(status, error=message, trace=traceback.format_exc()[-2000:])
        return 1


def run(args: argparse.Namespace, ev: Events, t0: float) -> int:
    from harness import guard

    timings: dict[str, float] = {}
    if not args.baseline:
        findings = guard.scan(args.kernel_dir)
        if findings:
            ev.final("rejected", error="forbidden code: " + "; ".join(findings[:8]), findings=findings)
            return 0
    import torch

    from harness.cases import benchmarks_for, make_batch, mixed_cases, tests_for
    from harness.checker import check, sanity
    from harness.timing import PLANS, Flusher, geomean, measure, pool_size

    if not torch.cuda.is_available():
        ev.final("crash", error="no CUDA device is visible to the harness")
        return 0
    device = torch.device("cuda:0")
    torch.cuda.init()
    timings["startup_s"] = time.monotonic() - t0
    rng = random.Random(args.seed)
    flags_before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                    torch.get_float32_matmul_precision())
    compile_info: dict[str, Any] = {}
    if args.baseline:
        def fn(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h, tau = torch.geqrf(a)
            return h.contiguous(), tau.contiguous()
        scope = _no_scope
    else:
        guard.install()
        t = time.monotonic()
        ev.emit(stage="import", label=str(args.kernel_dir))
        try:
            with guard.candidate_scope():
                module = load_candidate(args.kernel_dir)
        except BaseException as exc:
            status, message = classify(exc)
            status = "rejected" if status == "rejected" else "compile_error"
            ev.final(status, error=f"kernel.py: {message}", trace=traceback.format_exc()[-3000:])
            return 0
        timings["import_kernel_s"] = time.monotonic() - t
        if callable(getattr(module, "compile_info", None)):
            try:
                compile_info = dict(module.compile_info())
            except Exception as exc:  # diagnostics are optional
                compile_info = {"error": str(exc)[:200]}
        fn = module.custom_kernel
        scope = guard.candidate_scope

    def flags_changed() -> bool:
        now = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
               torch.get_float32_matmul_precision())
        return now != flags_before

    def call(a: torch.Tensor) -> Any:
        with scope():
            return fn(a)

    # --- correctness -------------------------------------------------------------------------------
    t = time.monotonic()
    worst = {"factor": 0.0, "orth": 0.0, "recon": 0.0}
    tests = tests_for(args.mode)
    for number, spec in enumerate(tests, 1):
        seed = rng.getrandbits(48)
        ev.emit(stage="test", label=f"{number}/{len(tests)} {spec.label}")
        a = make_batch(spec, seed, device)
        pristine = a.clone()
        torch.cuda.synchronize()
        try:
            out = call(a)
            problem = sanity(a, out)
            if not problem:
                snap = snapshot_outputs(out)
            torch.cuda.synchronize()
        except BaseException as exc:
            status, message = classify(exc)
            ev.final(status, error=f"test {spec.label}: {message}", failing=spec.label, compile=compile_info,
                     trace=traceback.format_exc()[-2000:])
            return 0
        if flags_changed():
            ev.final("rejected", error="the candidate changed global numeric flags (TF32 / matmul precision), "
                     "which would leak into the checker", failing=spec.label)
            return 0
        if not torch.equal(a, pristine):
            ev.final("incorrect", error=f"test {spec.label}: custom_kernel modified its input A", failing=spec.label)
            return 0
        if problem:
            ev.final("incorrect", error=f"test {spec.label}: {problem}", failing=spec.label)
            return 0
        if escaped(snap, out):
            ev.final("rejected", error=f"test {spec.label}: {ESCAPED}", failing=spec.label)
            return 0
        verdict = check(a, out[0], out[1])
        for key in worst:
            worst[key] = max(worst[key], getattr(verdict, key))
        if not verdict.ok:
            where = verdict.reason
            if spec.case == "mixed" and verdict.matrix is not None:
                where += f" (a {mixed_cases(spec, seed)[verdict.matrix]} matrix)"
            ev.final("incorrect", error=f"test {spec.label}: {where}", failing=spec.label, worst=worst)
            return 0
        del a, pristine, out
    timings["tests_s"] = time.monotonic() - t

    # --- benchmark ---------------------------------------------------------------------------------
    t = time.monotonic()
    spent: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(name: str) -> Iterator[None]:  # where the benchmark stage's time goes, for the overhead report
        began = time.monotonic()
        try:
            yield
        finally:
            spent[name] = spent.get(name, 0.0) + time.monotonic() - began

    plan = PLANS[args.mode]
    flush = Flusher(device)
    shapes: list[dict[str, Any]] = []
    flags: list[str] = []
    timed_total = 0.0
    for spec in benchmarks_for(args.mode):
        ev.emit(stage="bench", label=spec.label)
        count = pool_size(plan, spec.batch * spec.n * spec.n * 4)
        with phase("inputs"):
            warm = make_batch(spec, rng.getrandbits(48), device)  # not in the pool: its answer is no use later
            pool = [make_batch(spec, rng.getrandbits(48), device) for _ in range(count)]
            torch.cuda.synchronize()
        try:
            with phase("warmup"):
                out = call(warm)  # warm-up: compilation, workspaces, graph capture stay out of the timing
                problem = sanity(warm, out)
                snap = snapshot_outputs(out) if not problem else None
                torch.cuda.synchronize()
            if snap is not None and escaped(snap, out):
                ev.final("rejected", error=f"benchmark {spec.label}: {ESCAPED}", failing=spec.label)
                return 0
            if problem:  # the values are judged on the timed calls' outputs, rechecked below
                ev.final("incorrect", error=f"benchmark {spec.label}: {problem}", failing=spec.label)
                return 0
            del out, warm
            with phase("timed_loop"):
                timing = measure(call, pool, plan, flush, rng)
        except BaseException as exc:
            status, message = classify(exc)
            ev.final(status, error=f"benchmark {spec.label}: {message}", failing=spec.label,
                     trace=traceback.format_exc()[-2000:])
            return 0
        for before, after, out in timing.kept:  # the outputs of timed calls are checked too
            if not torch.equal(before, after):
                ev.final("incorrect", error=f"benchmark {spec.label}: custom_kernel modified its input during a "
                         "timed call", failing=spec.label)
                return 0
            problem = sanity(before, out)
            with phase("check"):
                verdict = check(before, out[0], out[1]) if not problem else None
            if verdict is None or not verdict.ok:
                ev.final("incorrect", error=f"benchmark {spec.label}: a timed call returned a wrong result: "
                         f"{problem or (verdict.reason if verdict else '')}", failing=spec.label)
                return 0
        summary = timing.summary()
        if summary["wall_median_us"] > 2 * summary["median_us"] + 1000:
            ev.final("rejected", error=f"benchmark {spec.label}: the device stayed busy long after the timed "
                     f"region ended ({summary['wall_median_us']:.0f} us wall vs {summary['median_us']:.0f} us on "
                     "the current stream): work escaped the timed stream", failing=spec.label)
            return 0
        floor = floor_us(spec.batch, spec.n)
        if summary["mean_us"] < floor:
            flags.append(f"{spec.label}: {summary['mean_us']:.1f} us is below the physical floor {floor:.1f} us")
        timed_total += sum(timing.event_us) / 1e6
        shapes.append({"shape": spec.label, "batch": spec.batch, "n": spec.n, "case": spec.case,
                       "cond": spec.cond, "floor_us": round(floor, 2), "pool": count,
                       **{k: round(v, 3) if isinstance(v, float) else v for k, v in summary.items()}})
        print(f"[harness] {spec.label}: {summary['mean_us']:.1f} us (+-{summary['std_us']:.1f}, "
              f"{summary['runs']} runs)", file=sys.stderr, flush=True)
        del pool, timing
    timings["bench_s"] = time.monotonic() - t
    timings.update({f"bench_{name}_s": value for name, value in spent.items()})
    timings["timed_kernel_s"] = timed_total
    score = geomean([s["mean_us"] for s in shapes])
    ev.final("ok", score=round(score, 3), unit="us", mode=args.mode, shapes=shapes,
             tests={"passed": len(tests), "total": len(tests)}, worst=worst, compile=compile_info, flags=flags,
             gpu=gpu_fingerprint(), timings={k: round(v, 3) for k, v in timings.items()},
             baseline=bool(args.baseline))
    return 0


class _NoScope:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _no_scope() -> _NoScope:
    return _NoScope()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the result is written and flushed: skip interpreter and CUDA teardown (a few hundred ms)

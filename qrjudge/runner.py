"""The runner: the only process that runs candidate code, and therefore never believed.

    python -m qrjudge.runner --ctl-in FD --ctl-out FD (--kernel-dir DIR | --baseline)

Started by the judge (qrjudge/judge.py), which it talks to in JSON lines over two pipes. First thing, it
moves into a user namespace of its own and arranges to die with the judge (qrjudge/isolation.py). It imports
torch and CuPy, then waits for the judge's first message (so a prestarted runner touches no GPU early).

Messages, in order: `warm` (create the CUDA context), `go` (the shared buffers, the device; `idle` false where the
GPU is shared and not yet this evaluation's alone: then `hold` later times the L2 flush, once it is), `call`s with
`reference` (the judge calibrates its clock on a function of ours while this process is still trusted), `load`
(the candidate is imported: from here on this process is the candidate's), then `call`s: the judge has written
a fresh input into the shared A (or, `staged`, into the host stage, to be copied into A here); flush L2, time
`custom_kernel` with CUDA events on the current stream, copy the outputs into the shared H and tau, synchronise
the device, say `done` and wait while the judge copies them (wire.Channel.handover), then answer with the times and
what was seen (form problems, work that escaped the timed stream, replaced machinery). A `prime` is an untimed call
on whatever A holds, before a staged call (qrjudge/calls.py, Context.call). The judge checks the outputs itself,
against its own copy of the input, and compares the times with its own clock.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import gc
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qrjudge import disarm, isolation, wire


def classify(exc: BaseException) -> dict[str, str]:
    """{status, message} for an exception raised by candidate code."""
    from qrjudge.guard import GuardError

    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0][:400] if str(exc).strip() else name
    if isinstance(exc, GuardError):
        status, message = "rejected", text
    elif "CompileException" in name:
        status, message = "compile_error", str(exc)[-3000:]
    elif "OutOfMemory" in name or "out of memory" in text.lower():
        status, message = "crash", f"out of GPU memory: {text}"
    elif "illegal" in text.lower() or "CUDA error" in text or "cudaError" in text or "CUDA_ERROR" in text:
        status, message = "crash", f"CUDA error (the context is lost): {text}"
    else:
        status, message = "crash", f"{name}: {text}"
    return {"status": status, "message": message, "trace": traceback.format_exc()[-2000:]}


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


def _json_safe(value: Any, depth: int = 0) -> Any:
    """What a candidate reports about itself, reduced to small JSON (it is shown, never trusted)."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, dict) and depth < 2:
        return {str(k)[:64]: _json_safe(v, depth + 1) for k, v in list(value.items())[:64]}
    if isinstance(value, (list, tuple)) and depth < 2:
        return [_json_safe(v, depth + 1) for v in list(value)[:64]]
    return str(value)[:200]


# torch.compile's compiler (torch._dynamo, 4-6.5 s a process on a busy H200 host: notebook run56) is imported only for
# a candidate that uses it: where its files name it, before the snapshots (`go`'s "compiler", guard.uses_compiler),
# else by the candidate; a profile needs none (`Session.profile`). Its import replaces torch.manual_seed, which nothing
# here calls: the broad snapshot leaves that entry out.
COMPILER_REPLACES = frozenset({"torch.manual_seed"})


def critical(timer: Any, cuda: bool) -> dict[str, Any]:
    """What the runner checks around every call (`integrity.Snapshot`): the timer and the machinery it times with,
    the modules the runner's loop runs on, and the runner itself."""
    import torch

    from qrjudge import arena, checker, guard, integrity, timing

    cuda_classes = [torch.cuda.Event, torch._C._CudaEventBase] if cuda else []
    return integrity.namespaces(*cuda_classes, type(timer), timing.Hold, torch.cuda, time, gc, json, os,
                                sys.modules[__name__], checker, timing, integrity, guard, arena, wire)


class Laps:
    """Seconds each step took since the one before (`lap(name)` ends a step): a set-up's parts, for the record."""

    def __init__(self) -> None:
        self.last, self.parts = time.monotonic(), dict[str, float]()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.parts[name], self.last = round(now - self.last, 3), now


class Session:
    """The runner's state between messages: the device, the shared buffers, the candidate."""

    def __init__(self, args: argparse.Namespace, go: dict[str, Any], compiles: Any = None, ahead: Any = None) -> None:
        import torch

        from qrjudge import arena, checker, guard, integrity, timing

        lap = Laps()  # where the set-up's time goes (the testing runner's is on a shared GPU's critical path)
        if go.get("compiler"):  # before the snapshots, as the candidate's import of it would come after them
            with contextlib.suppress(ImportError):
                import torch._dynamo  # noqa: F401  (COMPILER_REPLACES)
            lap("compiler")
        self.torch = torch
        self.args = args
        self.compiles = compiles  # the compile cache's client (qrjudge/nvrtc_client.py), if its server runs
        self.ahead = ahead  # the import's modules compiled side by side (qrjudge/ahead.py), where CuPy is
        cuda = go.get("device") != "cpu"
        self.device = torch.device("cuda:0" if cuda else "cpu")
        if cuda:
            torch.cuda.init()
            # cuBLAS's handle and workspace, made before any candidate code: else the first benchmark shape that
            # calls it pays them in its first call, in the evaluation's hold of a shared GPU (640x512's
            # first call of the QR seed 105-147 ms without, 27 ms with, on an H200: bench/warmup_probe.py)
            ones = torch.ones(1, 8, 8, device=self.device)
            torch.bmm(ones, ones)
            lap("cublas")
        self.arena = arena.Arena.open(go["arenas"])
        lap("arena")
        self.timer = timing.CudaTimer(idle=go.get("idle", True)) if cuda else timing.HostTimer()
        lap("timer")
        self.sanity, self.as_pair, self.modes_left = checker.sanity, checker.as_pair, checker.modes_left
        self.fn: Any = None
        self.scope: Any = contextlib.nullcontext
        if not args.baseline:
            guard.install()
        self.disarmed = "the baseline: none disarmed" if args.baseline else disarm.arm()  # torch, CuPy, NumPy loaded
        self.critical = integrity.Snapshot(critical(self.timer, cuda))  # checked around every call
        self.broad = integrity.Snapshot(integrity.namespaces(torch, torch.Tensor, torch._C.TensorBase, builtins),
                                        unwatched=COMPILER_REPLACES)
        lap("guard")
        self.setup_parts = lap.parts

    def load(self, ahead: bool = True) -> dict[str, Any]:
        """Import the candidate (or take torch.geqrf for the baseline); from here on nothing here is trusted.
        `ahead`: the modules it makes at import compiled side by side (qrjudge/ahead.py)."""
        from qrjudge import guard

        if self.args.baseline:
            torch = self.torch

            def geqrf(a: Any) -> tuple[Any, Any]:
                h, tau = torch.geqrf(a)
                return h.contiguous(), tau.contiguous()
            self.fn = geqrf
            return {"ready": True, "compile": {}}
        self.scope = guard.candidate_scope
        began = time.monotonic()
        try:
            with self.scope(), self.ahead.during(ahead) if self.ahead else contextlib.nullcontext():
                module = load_candidate(self.args.kernel_dir)
                disarm.check(libraries=True)
        except BaseException as exc:
            error = classify(exc)
            error["status"] = "rejected" if error["status"] == "rejected" else "compile_error"
            error["message"] = f"kernel.py: {error['message']}"
            return {"error": error}
        info: Any = {}
        if callable(getattr(module, "compile_info", None)):
            try:
                with self.scope():
                    info = module.compile_info()
            except Exception as exc:  # diagnostics are optional
                info = {"error": str(exc)[:200]}
        self.fn = module.custom_kernel
        tamper = self.critical.changed() or self.broad.changed() or guard.intact() or self.modes_left()
        return {"ready": True, "compile": _json_safe(info), "import_s": round(time.monotonic() - began, 3),
                "tamper": tamper}

    def call(self, message: dict[str, Any], done: Callable[[], None] = lambda: None) -> dict[str, Any]:
        """One call (module docstring); `done` is told the moment its outputs are in the shared buffers and the
        device is idle, before the checks and the reply: the judge's clock stops there, and `done` returns once the
        judge has its copy of the outputs (wire.Channel.handover)."""
        from qrjudge.specs import Spec

        spec = Spec.from_list(message["spec"])
        a, h, tau = self.arena.views(spec.batch, spec.n)  # the judge has written this call's input into A
        if message.get("staged"):  # ... or into the stage
            a.copy_(self.arena.stage(spec.batch, spec.n))
        fn, scope, timer = *self._chosen(message), self.timer
        (gc.disable if message.get("timed") else gc.enable)()
        if message.get("flush"):
            timer.flush()
        tamper = self.critical.changed()
        if tamper:
            return {"tamper": tamper}
        timer.settle()
        try:
            began = time.perf_counter()
            timer.start()
            with scope():
                out = fn(a)
            timer.stop()
            disarm.check()
            if left := self.modes_left():
                return {"tamper": left}
            out = self.as_pair(out)
            problem = self.sanity(a, out)
            if not problem:
                h.copy_(out[0])
                tau.copy_(out[1])
            timer.settle()
            wall_us = (time.perf_counter() - began) * 1e6
            done()
        except BaseException as exc:
            return {"error": classify(exc)}
        escaped = not problem and not (self.torch.equal(h, out[0]) and self.torch.equal(tau, out[1]))
        del out
        return {"event_us": timer.elapsed_us(), "wall_us": wall_us, "problem": problem, "escaped": escaped,
                "tamper": self.critical.changed()}

    def _chosen(self, message: dict[str, Any]) -> tuple[Callable[[Any], Any], Callable[[], Any]]:
        """(the function a call runs, the scope it runs in): the judge's reference before the candidate is
        loaded (calibration), else the candidate under the runtime guard."""
        if message.get("reference") and self.fn is None:
            return _reference, contextlib.nullcontext
        return self.fn, self.scope

    def prime(self, message: dict[str, Any]) -> dict[str, Any]:
        """An untimed call on the input A still holds (the judge has not written the next one yet), ended by
        a device-wide synchronisation, so nothing the candidate starts here outlives it."""
        from qrjudge.specs import Spec

        spec = Spec.from_list(message["spec"])
        a, _, _ = self.arena.views(spec.batch, spec.n)
        fn, scope = self._chosen(message)
        try:
            with scope():
                out = fn(a)
            del out
            tamper = self.critical.changed()  # while the GPU finishes: the timed call follows this closely
            self.timer.settle()
        except BaseException as exc:
            return {"error": classify(exc)}
        return {"tamper": tamper}

    def profile(self, message: dict[str, Any]) -> dict[str, Any]:
        """One untimed call on the input the judge wrote into A, under torch's profiler: each kernel's name, its
        launches and its device time (the CPU self-test: each operator's CPU time). Shown to the model that
        improves the candidate, never scored: it comes from the candidate's own process."""
        from torch.autograd import profiler

        from qrjudge.specs import Spec

        spec = Spec.from_list(message["spec"])
        a, _, _ = self.arena.views(spec.batch, spec.n)
        cuda = self.device.type == "cuda"
        try:
            # (torch.profiler.profile wraps this one in a schedule, and its start imports torch.compile's compiler)
            with profiler.profile(use_cpu=not cuda, use_device="cuda" if cuda else None, use_kineto=True) as prof:
                with self.scope():
                    out = self.fn(a)
                self.timer.settle()
            del out
        except BaseException as exc:
            return {"error": classify(exc)}
        rows: list[dict[str, Any]] = []
        for avg in prof.key_averages():
            us = float(avg.self_device_time_total if cuda else avg.self_cpu_time_total)
            if us > 0:
                rows.append({"name": str(avg.key)[:120], "launches": int(avg.count), "us": round(us, 2)})
        return {"kernels": sorted(rows, key=lambda r: -float(r["us"]))[:40], "compiler": "torch._dynamo" in sys.modules}

    def verify(self) -> dict[str, Any]:
        from qrjudge import guard

        return {"tamper": self.critical.changed() or self.broad.changed() or disarm.verify() or
                ("" if self.args.baseline else guard.intact()),
                "nvrtc_cache": self.compiles.stats() if self.compiles else None}  # (shown, never believed)


def compiled(compiles: Any) -> dict[str, Any]:
    """What the compile cache did for this runner so far, its server quiet from here (qrjudge/nvrtc_client.py,
    `Client.quiet`: the judge asks before anything of the candidate is timed)."""
    if compiles is None:
        return {"nvrtc_cache": None}
    compiles.quiet()
    return {"nvrtc_cache": compiles.stats()}


def _reference(a: Any) -> tuple[Any, Any]:
    """The judge's calibration: outputs of the right form at almost no cost."""
    import torch

    return torch.zeros_like(a), a.new_zeros(a.shape[:2])


def serve(args: argparse.Namespace, channel: wire.Channel, isolated: str, compiles: Any = None,
          ahead: Any = None) -> int:
    go = channel.receive()
    if go and go.get("op") == "warm":  # CUDA's start-up, at the same time as the judge's
        mps = None
        if go.get("device") != "cpu":
            import torch

            from qrjudge import timing

            torch.cuda.init()
            channel.reader.spin_s = wire.SPIN_S
            mps = timing.mps_enabled()
        channel.send({"warm": True, "nonce": go.get("nonce"), "mps": mps})
        go = channel.receive()
    if not go or go.get("op") != "go":
        return 1
    began = time.monotonic()
    cpu = isolation.pin_to_fastest_cpu() if os.environ.get("EVOLVE_RUNNER_PIN") == "fastest" else None
    session = Session(args, go, compiles, ahead)
    channel.send({"ready": True, "isolation": f"{isolated}; {session.disarmed}", "cpu": cpu, "nonce": go.get("nonce"),
                  "hold_us": session.timer.hold_us, "hold_error": session.timer.hold_error,
                  "setup_s": round(time.monotonic() - began, 3), "setup_parts": session.setup_parts})
    handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "load": lambda m: session.load(bool(m.get("ahead", True))), "prime": session.prime,
        "verify": lambda m: session.verify(),
        "hold": lambda m: {"hold_us": session.timer.measure(), "hold_error": session.timer.hold_error},
        "profile": session.profile, "compiles": lambda m: compiled(compiles),
        "call": lambda m: session.call(m, lambda: channel.handover(m["nonce"]))}
    while True:
        message = channel.receive()
        if message is None or message.get("op") == "exit":
            return 0
        channel.send({**handlers[message["op"]](message), "nonce": message.get("nonce")})


def main(argv: list[str] | None = None) -> int:
    isolation.die_with_parent()
    p = argparse.ArgumentParser()
    p.add_argument("--ctl-in", type=int, required=True)
    p.add_argument("--ctl-out", type=int, required=True)
    p.add_argument("--writable", required=True, help="the one directory the candidate may write (the judge's)")
    p.add_argument("--kernel-dir", type=Path)
    p.add_argument("--baseline", action="store_true")
    p.add_argument("--nvrtc-out", type=int, help="the compile cache's request pipe (qrjudge/nvrtc_cache.py)")
    p.add_argument("--nvrtc-in", type=int, help="its reply pipe")
    args = p.parse_args(argv)
    channel = wire.Channel(args.ctl_in, args.ctl_out)
    try:  # first, while this process has one thread: nothing the candidate runs later can undo it
        where = isolation.confine([args.writable], mask_solvers=not args.baseline, hidden=isolation.judges_only())
    except (isolation.ConfineError, OSError) as exc:
        if os.environ.get("EVOLVE_RUNNER_CONFINE") != "off":
            first = channel.receive() or {}
            channel.send({"error": {"status": "crash", "message": f"the runner could not confine itself ({exc}); "
                                    "the judge cannot keep its files from a candidate here (EVOLVE_RUNNER_CONFINE"
                                    "=off runs it unconfined, on a machine without user namespaces)"},
                          "nonce": first.get("nonce")})
            return 1
        where = f"none (EVOLVE_RUNNER_CONFINE=off; {exc})"
    import torch  # noqa: F401  the slow part of start-up, before the judge's first message

    compiles = ahead = None
    with contextlib.suppress(ImportError):
        import cupy

        from qrjudge import ahead as compile_ahead

        ahead = compile_ahead.install(cupy)  # the modules a candidate makes at import, compiled side by side
        if args.nvrtc_out is not None and args.nvrtc_in is not None:
            from qrjudge import nvrtc_client

            compiles = nvrtc_client.install(args.nvrtc_out, args.nvrtc_in)
    disarm.prepare()  # the solver routines of the libraries loaded so far read while the judge has no need of us
    try:
        return serve(args, channel, where, compiles, ahead)
    except BaseException as exc:  # the judge learns why, whatever it was
        with contextlib.suppress(OSError):
            channel.send({"error": classify(exc)})
        return 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip interpreter and CUDA teardown

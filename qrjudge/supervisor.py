"""The QR judge: `python -m qrjudge --kernel-dir DIR [--mode quick|full|final] [--seed S]`.

A light supervisor (no torch import) that runs the judge (qrjudge/judge.py, which runs the candidate in a
runner process of its own) in a fresh session, watches its progress on the judge's stdout, kills it when it
hangs, refuses an `ok` verdict that lacks any test, shape or check of its mode, and always prints exactly
one JSON result line last on stdout:
status, score (12-shape geometric mean of the mean time per call, µs), per-shape timings, worst scaled
residuals, compile diagnostics, harness version, GPU fingerprint, and where the time went. Human-readable
progress goes to stderr. `--baseline` times torch.geqrf the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from qrjudge import isolation, specs, wire

HARNESS_DIR = Path(__file__).resolve().parent
TIMEOUTS = {"quick": 120.0, "full": 480.0, "final": 1200.0, "tiny": 120.0}  # whole evaluation, seconds
STALL_S = 90.0  # no progress for this long means a hung kernel
EXIT_S = 10.0  # a judge that has said its last is killed if it has not exited after this long


def harness_version() -> str:
    digest = hashlib.sha1()
    for path in sorted(HARNESS_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


VERSION = harness_version()  # of the files as this process read them, before any candidate ran


class Progress:
    """The judge's stdout, read in a thread: when it last said something, its last stage, its verdict."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.last = time.monotonic()
        self.stage: dict[str, Any] | None = None
        self.final: dict[str, Any] | None = None
        self.final_at: float | None = None  # when the verdict came
        self.go_at = self.last  # prestarted: when the go line went to the judge
        self.news = threading.Event()  # set at the verdict and at the end of the stream (the judge's exit)
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        for line in iter(lambda: stream.readline(1 << 24), b""):
            self.last = time.monotonic()
            with contextlib.suppress(json.JSONDecodeError):
                record = json.loads(line)
                if isinstance(record, dict) and isinstance(record.get("final"), dict):
                    self.final, self.final_at = record["final"], time.monotonic()
                    self.news.set()
                elif isinstance(record, dict) and "stage" in record:
                    self.stage = record
        self.news.set()

    def ok(self) -> bool:
        return self.final is not None and self.final.get("status") == "ok"


def _missing_kernel(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.baseline or (args.kernel_dir is not None and (args.kernel_dir / "kernel.py").is_file()):
        return None
    return {"status": "compile_error", "error": f"no kernel.py in {args.kernel_dir}"}


def _wait_for_go(proc: subprocess.Popen[bytes], args: argparse.Namespace, progress: Progress) -> dict[str, Any] | None:
    """Prestart: the judge and runner import torch while the caller prepares the candidate; one line on our
    stdin says the kernel directory is complete. A result here means the evaluation ends before it began."""
    line = sys.stdin.readline()
    problem = _missing_kernel(args) if line else {"status": "crash", "error": "prestarted, but no go line came "
                                                  "on stdin (the caller went away)"}
    specs.take_go(line, args)  # (the judge reads the same line)
    if problem is None and proc.stdin is not None:
        progress.go_at = time.monotonic()  # before the judge can read it: the evaluation's clock starts here
        try:
            proc.stdin.write(specs.go_line(args.mode, args.profile))
            proc.stdin.close()
        except OSError:  # the judge died while warming up: the watch loop reports how
            pass
        return None
    _kill(proc)
    return problem


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The judge's process group (the judge, its runner), killed and reaped."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()




def supervise(args: argparse.Namespace) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else secrets.randbits(48)
    started = time.monotonic()
    timeout = args.timeout or TIMEOUTS[args.mode]
    with tempfile.TemporaryDirectory(prefix="qr-harness-", ignore_cleanup_errors=True) as tmp:
        argv = [sys.executable, "-m", "qrjudge.judge", "--mode", args.mode, "--device", args.device]
        argv += ["--baseline"] if args.baseline else ["--kernel-dir", str(args.kernel_dir.resolve())]
        argv += ["--wait"] if args.prestart else []
        argv += ["--profile"] if args.profile else []
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HARNESS_DIR.parent), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        (Path(tmp) / "runner").mkdir()
        proc = subprocess.Popen(argv, cwd=tmp, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=isolation.die_with_parent)  # no orphan judge keeps the GPU
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"seed": seed}).encode() + b"\n")  # secret: never on a command line
        proc.stdin.flush()
        if not args.prestart:
            proc.stdin.close()
        tail: list[bytes] = []
        pump = threading.Thread(target=wire.forward, args=(proc.stderr, tail, 60), daemon=True)
        pump.start()
        progress = Progress(proc.stdout)  # type: ignore[arg-type]
        prestarted_s = None
        if args.prestart:
            early = _wait_for_go(proc, args, progress)
            if early is not None:
                return early
            prestarted_s = progress.go_at - started
            started = progress.last = progress.go_at  # the evaluation's clock starts at the go
            timeout = args.timeout or TIMEOUTS[args.mode]  # the go line may have named another mode
        killed = _watch(proc, progress, args.stall, started + timeout, timeout)
        if not progress.ok():  # an ok verdict needs nothing more; any other keeps the judge's last words
            progress.thread.join(timeout=2)
            pump.join(timeout=2)
    ended = time.monotonic()
    return _result(args, progress, killed, proc.returncode, b"".join(tail).decode("utf-8", "replace")[-3000:],
                   ended - started, prestarted_s, seed, ended)


def _watch(proc: subprocess.Popen[bytes], progress: Progress, stall: float, deadline: float, timeout: float) -> str:
    """Wait for the judge's verdict or its exit; kill its process group when it stalls or runs out of time.
    Returns why it was killed, or ''. An `ok` verdict is complete when it arrives: the judge's exit after it
    (its CUDA context torn down, 0.15-0.19 s on an H200) is left to the system, off the next evaluation's
    critical path; the runner was killed before the verdict was written."""
    while True:
        if progress.news.wait(timeout=0.05):  # the verdict or the judge's end, within a millisecond of it
            if not progress.ok():  # the judge is exiting: its log is read to the end, its exit code kept
                try:
                    proc.wait(timeout=EXIT_S)
                except subprocess.TimeoutExpired:
                    _kill(proc)
            return ""
        killed = ""
        if time.monotonic() - progress.last > stall:
            killed = f"no progress for {stall:g} s"
        elif time.monotonic() > deadline:
            killed = f"the evaluation exceeded {timeout:g} s"
        if killed:
            _kill(proc)
            return killed


def _result(args: argparse.Namespace, progress: Progress, killed: str, code: int | None, log: str, wall: float,
            prestarted_s: float | None, seed: int, ended: float) -> dict[str, Any]:
    stage = progress.stage
    where = f"during {stage['stage']} {stage.get('label', '')}".strip() if stage else "at start-up"
    if killed:
        result: dict[str, Any] = {"status": "timeout", "error": f"{killed} ({where}); the judge was killed",
                                  "log": log}
    elif progress.final is None:
        how = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        result = {"status": "crash", "error": f"the judge died {where} ({how}) without a result", "log": log}
    else:
        result = dict(progress.final)
        gap = specs.incomplete(result, args.mode) if result.get("status") == "ok" else ""
        if gap:
            result.update(status="crash", error=f"an incomplete verdict was refused: {gap}")
        if not result.get("error"):
            result.pop("error", None)
    timings = result.setdefault("timings", {})
    timings["wall_s"] = round(wall, 3)
    if prestarted_s is not None:
        timings["prestarted_s"] = round(prestarted_s, 3)  # process start to go: off the critical path
    if "timed_kernel_s" in timings:
        timings["overhead_s"] = round(wall - timings["timed_kernel_s"], 3)
    if progress.final_at is not None:  # ours after the verdict (and, for any but `ok`, the judge's exit)
        timings["after_verdict_s"] = round(ended - progress.final_at, 3)
    result.update(harness_version=VERSION, seed=seed, mode=args.mode)
    if result.get("status") != "ok":
        result["score"] = None
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m qrjudge", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel-dir", type=Path, help="the candidate: a directory with kernel.py")
    p.add_argument("--mode", default="full", choices=specs.MODES,
                   help="quick: a cheap screen; full: every test and the 12 shapes; final: thorough; tiny: the "
                        "harness's self-test with small matrices (with --device cpu)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help="cpu: run the judge and the runner on the CPU (a self-test of the harness; scores mean "
                        "nothing)")
    p.add_argument("--seed", type=int, help="input seed (default: a fresh secret one per evaluation)")
    p.add_argument("--baseline", action="store_true", help="time torch.geqrf instead of a candidate")
    p.add_argument("--profile", action="store_true",
                   help="after an ok benchmark, one call per shape under torch's profiler: which kernels take the "
                        "time (for the model that improves the kernel; never scored)")
    p.add_argument("--timeout", type=float, help="limit for the whole evaluation, seconds")
    p.add_argument("--stall", type=float, default=STALL_S, help="kill after this long without progress, s")
    p.add_argument("--prestart", action="store_true",
                   help="start and import torch now; evaluate once a line arrives on stdin (the kernel directory "
                        "may be filled in meanwhile); wall time and timeouts count from that line")
    args = p.parse_args(argv)
    if not args.baseline and args.kernel_dir is None:
        p.error("--kernel-dir DIR is required (or --baseline)")
    isolation.protect_memory()  # its /proc/<pid>/root and fd entries are refused to anything of the candidate's
    early = None if args.prestart else _missing_kernel(args)
    result = early if early is not None else supervise(args)
    result.setdefault("harness_version", VERSION)
    if result.get("status") != "ok":
        result["score"] = None
    print(json.dumps(result, default=str), flush=True)
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())

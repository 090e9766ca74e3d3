"""The QR judge: `python -m harness.qr --kernel-dir DIR [--mode quick|full|final] [--seed S]`.

A light supervisor (no torch import) that runs the worker (harness/worker.py) in a fresh process, watches
its progress, kills it when it hangs, and always prints exactly one JSON result line last on stdout:
status, score (12-shape geometric mean of the mean time per call, µs), per-shape timings, worst scaled
residuals, compile diagnostics, harness version, GPU fingerprint, and where the time went. Human-readable
progress goes to stderr. `--baseline` times torch.geqrf the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
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

HARNESS_DIR = Path(__file__).resolve().parent
TIMEOUTS = {"quick": 120.0, "full": 480.0, "final": 1200.0}  # whole evaluation, seconds
STALL_S = 90.0  # no progress for this long means a hung kernel


def harness_version() -> str:
    digest = hashlib.sha1()
    for path in sorted(HARNESS_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _die_with_parent() -> None:
    """In the worker: get SIGKILL when the supervisor dies, so no orphan keeps the GPU."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _pump(stream: IO[bytes], tail: list[bytes]) -> None:
    for line in iter(stream.readline, b""):
        sys.stderr.buffer.write(line)
        sys.stderr.flush()
        tail.append(line)
        del tail[:-60]


def _read_events(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            records.append(json.loads(line))
    final = next((r["final"] for r in reversed(records) if "final" in r), None)
    return records, final


def _missing_kernel(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.baseline or (args.kernel_dir is not None and (args.kernel_dir / "kernel.py").is_file()):
        return None
    return {"status": "compile_error", "error": f"no kernel.py in {args.kernel_dir}"}


def _wait_for_go(proc: subprocess.Popen[bytes], args: argparse.Namespace) -> dict[str, Any] | None:
    """Prestart: the worker imports torch while the caller prepares the candidate; one line on our stdin
    says the kernel directory is complete. A result here means the evaluation ends before it began."""
    line = sys.stdin.readline()
    problem = _missing_kernel(args) if line else {"status": "crash", "error": "prestarted, but no go line came "
                                                  "on stdin (the caller went away)"}
    if problem is None and proc.stdin is not None:
        try:
            proc.stdin.write(b"go\n")
            proc.stdin.close()
        except OSError:  # the worker died while warming up: the watch loop reports how
            pass
        return None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return problem


def supervise(args: argparse.Namespace) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else secrets.randbits(48)
    started = time.monotonic()
    timeout = args.timeout or TIMEOUTS[args.mode]
    with tempfile.TemporaryDirectory(prefix="qr-harness-") as tmp:
        events = Path(tmp) / "events.jsonl"
        events.touch()
        argv = [sys.executable, "-m", "harness.worker", "--mode", args.mode, "--seed", str(seed),
                "--events", str(events)]
        argv += ["--baseline"] if args.baseline else ["--kernel-dir", str(args.kernel_dir.resolve())]
        argv += ["--wait"] if args.prestart else []
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HARNESS_DIR.parent), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        proc = subprocess.Popen(argv, cwd=tmp, env=env, stdin=subprocess.PIPE if args.prestart else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=_die_with_parent)
        tail: list[bytes] = []
        pumps = [threading.Thread(target=_pump, args=(s, tail), daemon=True) for s in (proc.stdout, proc.stderr)]
        for pump in pumps:
            pump.start()
        prestarted_s = None
        if args.prestart:
            early = _wait_for_go(proc, args)
            if early is not None:
                return early
            prestarted_s = time.monotonic() - started
            started = time.monotonic()  # the evaluation's clock starts at the go
        last_size, last_progress, killed = 0, time.monotonic(), ""
        while proc.poll() is None:
            time.sleep(0.05)
            size = events.stat().st_size
            if size != last_size:
                last_size, last_progress = size, time.monotonic()
            if time.monotonic() - last_progress > args.stall:
                killed = f"no progress for {args.stall:g} s"
            elif time.monotonic() - started > timeout:
                killed = f"the evaluation exceeded {timeout:g} s"
            if killed:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
        for pump in pumps:
            pump.join(timeout=2)
        records, final = _read_events(events)
    stage = next((r for r in reversed(records) if "stage" in r), None)
    where = f"during {stage['stage']} {stage.get('label', '')}".strip() if stage else "at start-up"
    log = b"".join(tail).decode("utf-8", "replace")[-3000:]
    if killed:
        result: dict[str, Any] = {"status": "timeout", "error": f"{killed} ({where}); the worker was killed",
                                  "log": log}
    elif final is None:
        code = proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        result = {"status": "crash", "error": f"the worker died {where} ({how}) without a result", "log": log}
    else:
        result = dict(final)
        if result.get("status") != "ok":
            result.setdefault("log", log)
    wall = time.monotonic() - started
    timings = result.setdefault("timings", {})
    timings["wall_s"] = round(wall, 3)
    if prestarted_s is not None:
        timings["prestarted_s"] = round(prestarted_s, 3)  # process start to go: off the critical path
    if "timed_kernel_s" in timings:
        timings["overhead_s"] = round(wall - timings["timed_kernel_s"], 3)
    result.update(harness_version=harness_version(), seed=seed, mode=args.mode)
    if result.get("status") != "ok":
        result["score"] = None
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.qr", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel-dir", type=Path, help="the candidate: a directory with kernel.py")
    p.add_argument("--mode", default="full", choices=("quick", "full", "final"),
                   help="quick: a cheap screen; full: every test and the 12 shapes; final: thorough")
    p.add_argument("--seed", type=int, help="input seed (default: a fresh secret one per evaluation)")
    p.add_argument("--baseline", action="store_true", help="time torch.geqrf instead of a candidate")
    p.add_argument("--timeout", type=float, help="limit for the whole evaluation, seconds")
    p.add_argument("--stall", type=float, default=STALL_S, help="kill after this long without progress, s")
    p.add_argument("--prestart", action="store_true",
                   help="start and import torch now; evaluate once a line arrives on stdin (the kernel directory "
                        "may be filled in meanwhile); wall time and timeouts count from that line")
    args = p.parse_args(argv)
    if not args.baseline and args.kernel_dir is None:
        p.error("--kernel-dir DIR is required (or --baseline)")
    early = None if args.prestart else _missing_kernel(args)
    result = early if early is not None else supervise(args)
    result.setdefault("harness_version", harness_version())
    if result.get("status") != "ok":
        result["score"] = None
    print(json.dumps(result, default=str), flush=True)
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())

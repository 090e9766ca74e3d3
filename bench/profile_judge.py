"""Where a prestarted evaluation's overhead goes, function by function, on the judge's side.

Runs the judge (qrjudge/judge.py) under cProfile, prestarted as `qrjudge.supervisor --prestart` runs it (torch
imported and the runner started, then the go line after --go-after seconds), each evaluation in a fresh
process. Prints the judge's verdict timings and the functions that took the most time (cumulative and own;
the wait for the go line among them), so that a cut to the overhead aims at a measured cost. The runner's share shows as the judge waiting in `Runner.ask`
(a call's judge overhead, `judge_overhead_us`, is that wait less the timed region).

    python bench/profile_judge.py seed_kernels/blocked_wy --mode full --repeats 2
    EVOLVE_GPU_LOCKS=$(mktemp -d) python bench/profile_judge.py ...   # the shared path, as per_gpu > 1 runs it
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The runner is a process of its own, started by the judge: it finds qrjudge where this script does.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from run_stages import lock_spans  # noqa: E402  (bench/, this script's directory)


def one(kernel_dir: Path, mode: str, device: str, go_after: float, top: int) -> None:
    import torch  # noqa: F401  imported before the go in a prestarted judge too

    from qrjudge import judge

    with contextlib.suppress(ImportError):
        import cupy  # noqa: F401
    kernel = str(kernel_dir.resolve())
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"seed": 7}\n')  # the judge reads its seed on stdin, never on its command line
    threading.Timer(go_after, lambda: os.write(write_end, b"go\n")).start()
    verdict = io.StringIO()
    profile = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="profile-judge-") as tmp, open(read_end) as go, \
            contextlib.redirect_stdout(verdict):
        os.chdir(tmp)
        sys.stdin = go
        began = time.monotonic()
        profile.runcall(judge.main, ["--kernel-dir", kernel, "--mode", mode, "--device", device, "--wait"])
        wall = time.monotonic() - began - go_after
        os.chdir(ROOT)
    os.close(write_end)
    lines = verdict.getvalue().strip().splitlines()
    result: dict[str, Any] = json.loads(lines[-1])["final"] if lines else {"status": "no verdict"}
    timings = result.get("timings", {})
    print(str(result.get("error", ""))[:300])
    print(f"status {result['status']} score {result.get('score')} wall after go {wall:.3f} s "
          f"(profiled), timed {timings.get('timed_kernel_s')}")
    print("timings", json.dumps(timings))
    print("warm-ups (ms, each shape's untimed first calls):",
          ", ".join(f"{s['shape']} {s.get('warmup_ms')}" for s in result.get("shapes", [])))
    held = lock_spans(result.get("gpu_lock"))  # EVOLVE_GPU_LOCKS set: the shared path, as per_gpu > 1 runs it
    if held:
        print("the GPU's lock held:", ", ".join(f"{how} {s:.3f} s" for how, s in held.items()))
    for key in ("cumulative", "tottime"):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(key).print_stats(top)
        print(f"--- by {key}\n" + "\n".join(line for line in text.getvalue().splitlines() if line.strip()))
    sys.stdout.flush()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernel_dir", type=Path)
    p.add_argument("--mode", default="full")
    p.add_argument("--device", default="cuda")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--go-after", type=float, default=8.0, help="seconds from start to the go line")
    p.add_argument("--top", type=int, default=45)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # this process is one evaluation
    args = p.parse_args()
    if args.one:
        one(args.kernel_dir, args.mode, args.device, args.go_after, args.top)
        return
    for i in range(args.repeats):  # each in a fresh process, as the judge always is: first uses cost there
        print(f"=== {args.kernel_dir} {args.mode}, evaluation {i + 1}", flush=True)
        subprocess.run([sys.executable, __file__, "--one", *sys.argv[1:]], check=False)


if __name__ == "__main__":
    main()

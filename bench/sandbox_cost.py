"""The QR harness inside evolver/sandbox.py and outside it, alternating, on kernels: score and wall time.

    python bench/sandbox_cost.py [KERNEL_DIR ...] [--repeats N] [--mode full] [--sides both|in|out]

Prints one JSON line per evaluation ({"kernel", "sandbox": bool, "score", "wall_s", "overhead_s"}) and a
summary line. The harness and the kernel are copied into a temporary directory, as the engine does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolver import sandbox  # noqa: E402


def evaluate(kernel: Path, mode: str, contained: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="evolve-eval-bench-") as tmp:
        shutil.copytree(ROOT / "harness", Path(tmp) / "harness", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(kernel, Path(tmp) / "kernel")
        argv = [sys.executable, "-m", "harness.qr", "--kernel-dir", f"{tmp}/kernel", "--mode", mode]
        if contained:
            spec = sandbox.spec_for(Path(tmp), gpu=True, network=False, exclude=[ROOT])
            argv = sandbox.command(argv, spec)
        began = time.monotonic()
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=900,
                              env={"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": "/tmp" if contained else tmp})
        wall = time.monotonic() - began
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"kernel": kernel.name, "sandbox": contained, "status": result["status"], "score": result.get("score"),
            "wall_s": round(wall, 3), "overhead_s": result.get("timings", {}).get("overhead_s"),
            "error": result.get("error"), "isolation": result.get("runner_isolation")}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("kernels", nargs="*", type=Path, default=[ROOT / "seed_kernels" / "blocked_wy"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--mode", default="full")
    p.add_argument("--sides", choices=("both", "in", "out"), default="both")
    args = p.parse_args()
    sides = {"both": (False, True), "in": (True,), "out": (False,)}[args.sides]
    rows = []
    for _ in range(args.repeats):
        for kernel in args.kernels:
            for contained in sides:
                rows.append(evaluate(kernel, args.mode, contained))
                print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for contained in (False, True):
        mine = [r for r in rows if r["sandbox"] == contained and r["status"] == "ok"]
        if mine:
            summary["sandbox" if contained else "plain"] = {
                "score_us": round(statistics.median(r["score"] for r in mine), 3),
                "wall_s": round(statistics.median(r["wall_s"] for r in mine), 3)}
    print(json.dumps({"summary": summary}), flush=True)


if __name__ == "__main__":
    main()

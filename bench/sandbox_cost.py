"""The QR harness inside evolver/evaluation/sandbox.py and outside it, alternating, on kernels: score and wall time.

    python bench/sandbox_cost.py [KERNEL_DIR ...] [--repeats N] [--mode full] [--device cuda|cpu]
                                [--sides both|in|out] [--prestart]

Prints one JSON line per evaluation ({"kernel", "sandbox": bool, "score", "wall_s", "overhead_s", "shapes_us",
"steal_ms"}) and a summary line. The harness and the kernel are copied into a temporary directory, as the engine does;
`--prestart` overlaps each evaluation's start-up with the one before (about 7 s an evaluation becomes about 3).
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

from evolver.evaluation import sandbox  # noqa: E402
from evolver.evaluation.prestart import PRESTART_AHEAD  # noqa: E402


class Evaluation:
    """One harness evaluation in a temporary directory (the harness and the kernel copied there, as the engine
    does), inside the sandbox or not. With `prestart`, the harness starts at once and imports torch, then
    waits for `run`: the next evaluation warms up while the current one runs, as the engine pipelines them."""

    def __init__(self, kernel: Path, contained: bool, mode: str, device: str, prestart: bool) -> None:
        self.kernel, self.contained = kernel, contained
        self.tmp = Path(tempfile.mkdtemp(prefix="evolve-eval-bench-"))
        shutil.copytree(ROOT / "qrjudge", self.tmp / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(kernel, self.tmp / "kernel")
        argv = [sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", f"{self.tmp}/kernel", "--mode", mode,
                "--device", device]
        argv += ["--prestart"] if prestart else []
        if contained:
            spec = sandbox.spec_for(self.tmp, gpu=device == "cuda", network=False, exclude=[ROOT])
            argv = sandbox.command(argv, spec)
        self.argv, self.prestart = argv, prestart
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(self.tmp), "TMPDIR": "/tmp" if contained else str(self.tmp)}
        self.proc = self._start() if prestart else None

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen(self.argv, cwd=self.tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=self.env)

    def run(self) -> dict:
        began = time.monotonic()
        proc = self.proc or self._start()
        try:
            stdout, _ = proc.communicate("go\n" if self.prestart else "", timeout=900)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        wall = time.monotonic() - began
        result = json.loads(stdout.strip().splitlines()[-1])
        return {"kernel": self.kernel.name, "sandbox": self.contained, "status": result["status"],
                "score": result.get("score"), "wall_s": round(wall, 3), "prestarted": self.prestart,
                "overhead_s": result.get("timings", {}).get("overhead_s"), "error": result.get("error"),
                "isolation": result.get("runner_isolation"),
                # per shape, so that a pair that differs can be traced to the shapes that moved (the host-bound
                # small ones, when one evaluation lands in the machine's slow mode: docs/benchmarks-history.md)
                "shapes_us": {s["shape"]: s.get("mean_us") for s in result.get("shapes", [])},
                "steal_ms": sum((s.get("host") or {}).get("steal_ms") or 0 for s in result.get("shapes", []))}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("kernels", nargs="*", type=Path, default=[ROOT / "seed_kernels" / "blocked_wy"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--mode", default="full")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--sides", choices=("both", "in", "out"), default="both")
    p.add_argument("--prestart", action="store_true",
                   help="start each evaluation while the one before runs (wall_s then counts from its go line)")
    args = p.parse_args()
    sides = {"both": (False, True), "in": (True,), "out": (False,)}[args.sides]
    jobs = [(kernel, contained) for _ in range(args.repeats) for kernel in args.kernels for contained in sides]
    rows = []
    ahead = PRESTART_AHEAD if args.prestart else 0  # evaluations warming up while one runs, as the engine keeps them
    upcoming = [Evaluation(*job, args.mode, args.device, args.prestart) for job in jobs[:ahead]]
    for number, job in enumerate(jobs):
        current = upcoming.pop(0) if upcoming else Evaluation(*job, args.mode, args.device, args.prestart)
        if ahead and number + ahead < len(jobs):
            upcoming.append(Evaluation(*jobs[number + ahead], args.mode, args.device, args.prestart))
        rows.append(current.run())
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

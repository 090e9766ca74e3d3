"""Islands against a single population, `tune` only (no LLM), at equal budgets, over several seeds.

    python bench/islands_vs_single.py [--seeds 5] [--candidates 100] [--problem sort|rastrigin|both]

Each run is a real `evolve start` in a fresh repository; the best score is read back with
`evolve status --json`. Two problems:

- sort: the CPU example (examples/sort), timed for real. Its tune space has 12 x 2 x 2 = 48 points, so
  a budget of 100 candidates exhausts it under both structures; what differs is only which noisy
  measurement of the same configurations comes out lowest.
- rastrigin: a deterministic, multimodal stand-in for a kernel's parameter space (a standard test function
  of evolutionary search, not tuned to either structure): 6 parameters with 9 values each, -2 to 2 in
  steps of 0.5 (531,441 points), score = 1 + sum(x^2 - 10 cos(2 pi x)) + 60, whose local optima sit on every
  integer point; the seed starts at the far corner, all parameters 2.

Islands: `islands = 4`, `migrate_every = 16`; single: `islands = 1`. Both use `population = 8` (the elite
parents are drawn from, per island) and the same evolution seed per pair.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RASTRIGIN_CHECK = '''"""Deterministic evaluator: a discretised Rastrigin function of the @tune parameters in params.py."""
import argparse, json, math, re, sys

p = argparse.ArgumentParser()
p.add_argument("--kernel-dir", required=True)
p.add_argument("--mode", default="full")
args = p.parse_args()
text = open(f"{args.kernel_dir}/params.py").read()
xs = [float(v) for v in re.findall(r"^P\\d = (\\S+)", text, re.M)]
score = 1 + 60 + sum(x * x - 10 * math.cos(2 * math.pi * x) for x in xs)
print(json.dumps({"status": "ok", "score": round(score, 6)}))
'''

RASTRIGIN_SEED = "\n\n".join(f"P{i} = 2.0  # @tune P{i}: -2.0 -1.5 -1.0 -0.5 0.0 0.5 1.0 1.5 2.0"
                             for i in range(6)) + "\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@x", *args], cwd=repo, check=True,
                   capture_output=True)


def make_problem(kind: str, repo: Path) -> Path:
    """A fresh repository holding the problem; returns the directory to run `evolve` in."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    if kind == "sort":
        shutil.copytree(ROOT / "examples" / "sort", repo / "sort", ignore=shutil.ignore_patterns("__pycache__", "kernel"))
        where = repo / "sort"
    else:
        where = repo / "rastrigin"
        (where / "seed").mkdir(parents=True)
        (where / "seed" / "params.py").write_text(RASTRIGIN_SEED)
        (where / "check.py").write_text(RASTRIGIN_CHECK)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "problem")
    return where


def config(kind: str, islands: int, seed: int, candidates: int) -> str:
    if kind == "sort":
        problem = '[problem]\nkernel_dir = "kernel"\nseeds = ["seeds/mergesort"]\n'
    else:
        problem = '[problem]\nkernel_dir = "kernel"\nseeds = ["seed"]\n'
    return (f"{problem}\n[evaluation]\ncommand = \"{{python}} check.py --kernel-dir {{kernel_dir}} --mode {{mode}}\"\n"
            "files = [\"check.py\"]\ngpus = []\nslots = 1\ntimeout_s = 60\n\n"
            f"[evolution]\noperators = {{ tune = 1.0 }}\nislands = {islands}\nmigrate_every = 16\npopulation = 8\n"
            "pipeline_depth = 1\n"
            f"seed = {seed}\n\n[budget]\nmax_candidates = {candidates}\n")


def best_of_run(kind: str, islands: int, seed: int, candidates: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="evolve-islands-") as tmp:
        where = make_problem(kind, Path(tmp) / "repo")
        (where / "evolve.toml").write_text(config(kind, islands, seed, candidates))
        git(where.parent, "add", "-A")
        git(where.parent, "commit", "-qm", "config")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = subprocess.run([sys.executable, "-m", "evolver", "start", "-q"], cwd=where, env=env,
                             capture_output=True, text=True, timeout=1800)
        if run.returncode != 0:
            raise SystemExit(f"evolve start failed:\n{run.stdout}\n{run.stderr}")
        status = json.loads(subprocess.run([sys.executable, "-m", "evolver", "status", "--json"], cwd=where,
                                           env=env, capture_output=True, text=True, check=True).stdout)
        return float(status["best"]["score"]), int(status["candidates"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--candidates", type=int, default=100)
    p.add_argument("--problem", choices=("sort", "rastrigin", "both"), default="both")
    args = p.parse_args()
    kinds = ("sort", "rastrigin") if args.problem == "both" else (args.problem,)
    for kind in kinds:
        print(f"\n{kind}: {args.candidates} candidates of tune per run, best score (lower is better)")
        print("| seed | islands (4) | single | islands better? | candidates made (islands / single) |")
        print("|---:|---:|---:|:---:|---:|")
        wins = 0
        pairs = []
        for seed in range(1, args.seeds + 1):
            isl, n_isl = best_of_run(kind, 4, seed, args.candidates)
            one, n_one = best_of_run(kind, 1, seed, args.candidates)
            wins += isl < one
            pairs.append((isl, one))
            verdict = "yes" if isl < one else ("tie" if isl == one else "no")
            print(f"| {seed} | {isl:.6g} | {one:.6g} | {verdict} | {n_isl} / {n_one} |", flush=True)
        print(f"islands better in {wins} of {args.seeds} seeds; median best: islands "
              f"{statistics.median(a for a, _ in pairs):.6g}, single {statistics.median(b for _, b in pairs):.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

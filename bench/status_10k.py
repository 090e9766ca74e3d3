"""Scale benchmark: `evolve status` (and the snapshot behind `evolve tui`) on a run of N candidates.

    python bench/status_10k.py [N] [--keep DIR]

Builds a repository holding the CPU example and a run of N candidates (branches with provenance
trailers, one JSON result note each, a lineage that branches like a real run) with `git fast-import`, then
times `python -m evolver status` end to end (process start included) and the in-process snapshot read.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolver.records.store import Store

ROOT = Path(__file__).resolve().parents[1]
ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "bench",
       "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/tmp"}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    import os
    return subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True, check=True,
                          env={**os.environ, **ENV}).stdout.decode()


def build(repo: Path, n: int) -> None:
    shutil.copytree(ROOT / "examples" / "sort", repo / "examples" / "sort", ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    rng = random.Random(0)
    source = (ROOT / "examples/sort/seeds/mergesort/sort.py").read_text()
    out = []
    t = 1764500000
    for i in range(1, n + 1):
        cid = f"{i:05d}"
        parent = base if i == 1 else f":{rng.randint(max(1, i - 200), i - 1)}"
        op = "seed" if i == 1 else rng.choice(["tune", "mutate", "mutate"])
        body = source.replace("CUTOFF = 2", f"CUTOFF = {i}")
        trailers = {"Id": cid, "Run": "r1", "Op": op, "Island": str(i % 3), "Kernel-Tree": f"{i:040x}"}
        if i > 1:
            trailers["Parent"] = f"{int(parent[1:]):05d}"
        if op == "mutate":
            trailers.update({"Model": "m", "Tokens": "1200+300", "Cost-USD": "0.0012"})
        message = f"evolve r1/{cid}: {op}\n\nbecause\n\n" + "".join(f"Evolve-{k}: {v}\n" for k, v in trailers.items())
        data = message.encode()
        blob = body.encode()
        out.append(b"commit refs/heads/evolve/r1/%s\nmark :%d\ncommitter bench <b@b> %d +0000\ndata %d\n%s\nfrom %s\n"
                   b"M 100644 inline examples/sort/kernel/sort.py\ndata %d\n%s\n"
                   % (cid.encode(), i, t + i, len(data), data, parent.encode(), len(blob), blob))
    scored: list[tuple[int, float]] = []
    notes = [b"commit refs/notes/evolve\ncommitter bench <b@b> %d +0000\ndata 5\nnotes\n" % (t + n + 1)]
    for i in range(1, n + 1):
        status = rng.choices(["ok", "incorrect", "compile_error", "patch_failed", "timeout"], [6, 1, 1, 1, 0.3])[0]
        score = round(rng.uniform(900, 2000), 2) if status == "ok" else None
        if score is not None:
            scored.append((i, score))
        note = json.dumps({"t": t + i, "status": status, "score": score, "harness": "h", "gpu": "g",
                           "details": {"per_repeat_us": [1.0, 2.0]}}).encode() + b"\n"
        notes.append(b"N inline :%d\ndata %d\n%s\n" % (i, len(note), note))
    git(repo, "fast-import", "--quiet", input=b"".join(out) + b"".join(notes))
    best = min(scored, key=lambda kv: kv[1])[0]
    git(repo, "update-ref", "refs/heads/best", git(repo, "rev-parse", f"refs/heads/evolve/r1/{best:05d}").strip())
    meta = git(repo, "hash-object", "-w", "--stdin", input=json.dumps({"run": "r1", "base": base}).encode()).strip()
    git(repo, "update-ref", "refs/evolve/runs/r1", meta)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("n", nargs="?", type=int, default=10_000)
    p.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = p.parse_args()
    repo = args.keep or Path(tempfile.mkdtemp(prefix="evolve-10k-"))
    t0 = time.perf_counter()
    build(repo, args.n)
    print(f"built {args.n} candidates with notes in {time.perf_counter() - t0:.1f} s: {repo}")
    cwd = repo / "examples" / "sort"
    times = []
    for _ in range(5):
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "evolver", "status"], cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        assert proc.returncode == 0, proc.stderr
    print(proc.stdout.strip())
    print(f"evolve status, end to end: median {statistics.median(times):.3f} s, max {max(times):.3f} s (5 runs)")
    sys.path.insert(0, str(ROOT))

    store = Store(repo)
    snaps = []
    for _ in range(5):
        t = time.perf_counter()
        snap = store.snapshot("r1")
        snaps.append(time.perf_counter() - t)
    assert len(snap.candidates) == args.n
    print(f"snapshot read in-process: median {statistics.median(snaps):.3f} s")
    if not args.keep:
        shutil.rmtree(repo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

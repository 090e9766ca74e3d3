"""What a shape's first call costs in a fresh process, and how much of it a process can pay before it holds any
candidate code: the timed runner of a shared GPU makes each benchmark shape's first call (its warm-up) inside its
exclusive hold of the GPU, where nothing else runs (docs/benchmarks.md, "Throughput").

Each variant runs in a fresh process, as a runner is: torch and CuPy imported, CUDA started, then (the variant) some
work of the judge's own, then the kernel imported and each `full` benchmark shape called twice on a fresh input,
first and second call timed to a synchronisation:

    python bench/warmup_probe.py seed_kernels/tsqr_wy [--variants none cublas cupy both]

none: nothing before the kernel; cublas: one small torch.bmm (cuBLAS's handle and workspace); cupy: one CuPy
kernel on torch's stream (CuPy's device, stream and launch path); both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import importlib.util, json, sys, time
sys.path.insert(0, sys.argv[1])
import torch, cupy
torch.cuda.init()
variant, kernel_dir = sys.argv[2], sys.argv[3]
from qrjudge.cases import make_batch
from qrjudge.specs import benchmarks_for
began = time.perf_counter()
x = torch.ones(2, 8, 8, device="cuda")
torch.cuda.synchronize()
if variant in ("cublas", "both"):
    torch.bmm(x, x)
if variant in ("cupy", "both"):
    s = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with s:
        cupy.asarray(x).sum()
torch.cuda.synchronize()
before = time.perf_counter() - began
spec = importlib.util.spec_from_file_location("kernel", kernel_dir + "/kernel.py")
kernel = importlib.util.module_from_spec(spec)
began = time.perf_counter()
spec.loader.exec_module(kernel)
imported = time.perf_counter() - began
rows, seen = [], set()
for s in benchmarks_for("full"):
    if (s.batch, s.n) in seen:
        continue
    seen.add((s.batch, s.n))
    times = []
    for seed in (1, 2):
        a = make_batch(s, seed, "cuda")
        torch.cuda.synchronize()
        began = time.perf_counter()
        kernel.custom_kernel(a)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - began) * 1e3)
    rows.append([f"{s.batch}x{s.n}", *times])
print(json.dumps({"variant": variant, "before_ms": before * 1e3, "import_ms": imported * 1e3, "rows": rows}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernel_dir", type=Path)
    p.add_argument("--variants", nargs="+", default=["none", "cublas", "cupy", "both", "none"])
    args = p.parse_args()
    for variant in args.variants:
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), variant, str(args.kernel_dir.resolve())],
                             capture_output=True, text=True, check=False)
        if out.returncode:
            print(variant, "failed:", out.stderr[-2000:])
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        first = sum(row[1] for row in r["rows"])
        second = sum(row[2] for row in r["rows"])
        print(f"{variant:7} judge's own {r['before_ms']:7.1f} ms, import {r['import_ms']:7.1f} ms, first calls "
              f"{first:7.1f} ms, second {second:6.1f} ms: "
              + ", ".join(f"{name} {a:.1f}/{b:.1f}" for name, a, b in r["rows"]))


if __name__ == "__main__":
    main()

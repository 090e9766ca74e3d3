"""One trailing update of tsqr_wy (C = (I - V T V^T)^T C) timed three ways on the GPU: tf32x3_apply (one
kernel, the tile in shared memory), cuBLAS's three FP32 GEMMs (kernel.py's _apply with APPLY_ROWS = 0 and no
split TF32), and the split-TF32 pair tf32x3_vtc + tf32x3_update; milliseconds per call by CUDA events, median of
20. Shapes: 640x512's first outer block (w = 64, 512 rows, 448 columns) and 60x1024's first panel (w = 32).
Occupancy, issue rate and spills: run it under `ncu --kernel-name tf32x3_apply` (docs/benchmarks-history.md, eleventh pass).

    python bench/apply_probe.py [BATCH M N W ...]     (on a GPU machine; groups of four numbers)
"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch

KERNEL = Path(__file__).resolve().parents[1] / "seed_kernels" / "tsqr_wy" / "kernel.py"


def load(path=KERNEL):
    """A kernel file as a module of its own: tsqr_wy's kernel.py, or another (an exported file, say)."""
    spec = importlib.util.spec_from_file_location("tsqr_wy_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, reps=20):
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main(argv):
    k = load()
    numbers = [int(x) for x in argv] or [640, 512, 448, 64, 60, 1024, 992, 32]
    for batch, m, N, w in zip(*[iter(numbers)] * 4):
        V = torch.randn(batch, m, w, device="cuda")
        T = torch.randn(batch, w, w, device="cuda").triu()
        C0 = torch.randn(batch, m, N, device="cuda")
        C = C0.clone()
        flops = 4 * batch * m * N * w  # W = V^T C and C += V Wn
        line = [f"{batch}x({m}x{N}) w={w}:"]

        def fused(V=V, T=T, C=C):
            k._tf32x3_apply(V, T, C)

        def cublas(V=V, T=T, C=C):
            C.baddbmm_(V, torch.bmm(T.transpose(1, 2), torch.bmm(V.transpose(1, 2), C)), alpha=-1.0)

        def pair(V=V, T=T, C=C):
            k._tf32x3_update(V, torch.bmm(T.transpose(1, 2), k._tf32x3_vtc(V, C)).neg_(), C)

        for name, fn in (("tf32x3_apply", fused), ("cuBLAS x3", cublas), ("split vtc+update", pair)):
            C.copy_(C0)
            ms = timed(fn)
            line.append(f"{name} {ms:.3f} ms ({flops / ms / 1e9:.1f} TFLOP/s fp32-eq)")
        print("  ".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

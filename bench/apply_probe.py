"""One trailing update of tsqr_wy (C = (I - V T V^T)^T C) timed several ways on the GPU: tf32x3_apply (one
kernel, the tile in shared memory), cuBLAS's three FP32 GEMMs (kernel.py's _apply with APPLY_ROWS = 0 and no
split TF32), the split-TF32 pair tf32x3_vtc + tf32x3_update, and on a Hopper cuBLAS's V^T C + wgmma.cu's wg_update
and wgmma.cu's wg_apply (the whole update in one launch; with WG_SPLIT, where its strips are few, a strip's rows over
a cluster of blocks); then each half alone (V^T C: cuBLAS; C += V Wn: cuBLAS, wg_update). Milliseconds per call by
CUDA events, median of 20, and each one's largest error against float64 relative to the result's largest value.
Shapes: 640x512's first outer block (w = 64, 512 rows, 448 columns), its fourth (w = 64, 320 rows, 256 columns), an
inner panel's update (w = 32, 512 rows, 32 columns) and 60x1024's first panel (w = 32). Occupancy, issue rate and
spills: run it under `ncu --kernel-name tf32x3_apply` (docs/benchmarks-history.md, eleventh pass).

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


def hopper():
    """Whether this GPU runs wgmma.cu's kernels (compute capability 9.0: sm_90a's code)."""
    return torch.cuda.get_device_capability() == (9, 0)


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
    numbers = [int(x) for x in argv] or [640, 512, 448, 64, 640, 320, 256, 64, 640, 512, 32, 32, 60, 1024, 992, 32]
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

        def wgmma(V=V, T=T, C=C):  # as WG_FROM has it on a Hopper: V^T C and T^T W by cuBLAS, wg_update (wgmma.cu)
            k._wg_update(V, torch.bmm(T.transpose(1, 2), torch.bmm(V.transpose(1, 2), C)), C, -1.0)

        Cd, Vd, Td = C0.double(), V.double(), T.double()
        whole = Cd - Vd @ (Td.transpose(1, 2) @ (Vd.transpose(1, 2) @ Cd))
        ways = [("tf32x3_apply", fused), ("cuBLAS x3", cublas), ("split vtc+update", pair)]

        def split(V=V, T=T, C=C):  # wg_apply_split where kernel.py's WG_SPLIT would send it (few strips)
            shipped, k.WG_SPLIT = k.WG_SPLIT, 1
            try:
                k._wg_apply(V, T, C)
            finally:
                k.WG_SPLIT = shipped

        if hopper():
            ways += [("cuBLAS + wg_update", wgmma), ("wg_apply", lambda V=V, T=T, C=C: k._wg_apply(V, T, C)),
                     ("wg_apply WG_SPLIT", split)]
        for name, fn in ways:
            C.copy_(C0)
            fn()
            error = ((C.double() - whole).abs().max() / whole.abs().max()).item()
            C.copy_(C0)
            ms = timed(fn)
            line.append(f"{name} {ms:.3f} ms ({flops / ms / 1e9:.1f} TFLOP/s fp32-eq, error {error:.1e})")
        print("  ".join(line), flush=True)
        halves(k, V, C0, C)


def halves(k, V, C0, C):
    """V^T C and C += V Wn alone, each way: ms, and the error against float64."""
    batch, m, w = V.shape
    N = C.shape[2]
    Wn = torch.randn(batch, w, N, device="cuda")
    vtc = V.double().transpose(1, 2) @ C0.double()
    update = C0.double() + V.double() @ Wn.double()
    line = ["   halves:"]
    ways = [("V^T C cuBLAS", lambda: torch.bmm(V.transpose(1, 2), C0), vtc),
            ("C+=V Wn cuBLAS", lambda: C.baddbmm_(V, Wn), update)]
    ways += [("C+=V Wn wg_update", lambda: k._wg_update(V, Wn, C, 1.0) or C, update)] if hopper() else []
    for name, fn, want in ways:
        C.copy_(C0)
        got = fn()
        error = ((got.double() - want).abs().max() / want.abs().max()).item()
        ms = timed(fn)
        line.append(f"{name} {ms:.3f} ms (error {error:.1e})")
    print("  ".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

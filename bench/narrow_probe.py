"""narrow_cluster (reg_panel.cu) alone: microseconds a launch on the look-ahead's shapes, as it is and with parts of it
cut out (each variant a text edit of the source, compiled as kernel.py compiles reg_panel.cu), so that what its
time goes to shows; with each variant's registers and local memory.

    python bench/narrow_probe.py          (a GPU; about a minute)
"""

import statistics
from pathlib import Path

import cupy as cp
import torch

SEED = Path(__file__).resolve().parents[1] / "seed_kernels" / "tsqr_wy"
SOURCE = (SEED / "common.cu").read_text() + (SEED / "reg_panel.cu").read_text()
BODY = SOURCE[SOURCE.index("narrow_cluster("):]
CUTS = {  # variant: (text of the kernel's body, its replacement)
    "as is": ("", ""),
    "no DSMEM stores": ("for (int q = 0; q < MB_CLUSTER; ++q) st_cluster(&sums[blockIdx.x][e], q, s);",
                        "sums[blockIdx.x][e] = s;"),
    "no second pass": ("  float wn[32];  // lane c: Wn(:, c)", "  if (m > 0) return;\n  float wn[32];"),
    "no first pass's FMAs": ("        acc[4 * q] += v.x * x[rr];", "        acc[4 * q] += v.x;"),
    "no rows (barriers, sums)": ("const int r0 = blockIdx.x * per, r1 = min(m, r0 + per);",
                                 "const int r0 = blockIdx.x * per, r1 = r0;"),
    "returns at once": ("  cluster_barrier();  // every block of the cluster has started",
                        "  if (m > 0) return;\n  cluster_barrier();  // every block of the cluster has started"),
    "no cluster barriers": ("  cluster_barrier();", "  __syncthreads();"),  # (wrong sums: timing only)
}


def kernel(cut):
    old, new = CUTS[cut]
    body = BODY.replace(old, new) if old else BODY
    assert old in BODY, cut
    module = cp.RawModule(code=SOURCE.replace(BODY, body), options=("--std=c++17", "-DNB=32", "-DNWARPS=8",
                                                                      "-DMB_CLUSTER=8"))
    f = module.get_function("narrow_cluster")
    f.max_dynamic_shared_size_bytes = 8 * 32 * 36 * 4
    return f


def main() -> int:
    torch.cuda.init()
    for batch, m in ((2, 4096), (40, 352)):
        C, V, T = torch.randn(batch, m, 32, device="cuda"), torch.randn(batch, m, 32, device="cuda"), \
            torch.randn(batch, 32, 32, device="cuda").triu()
        for cut in CUTS:
            f = kernel(cut)
            args = (cp.uint64(C.data_ptr()), cp.int32(32), cp.int64(m * 32), cp.uint64(V.data_ptr()), cp.int32(32),
                    cp.int64(m * 32), cp.uint64(T.data_ptr()), cp.int32(32), cp.int64(1024), cp.int32(m), cp.int32(32),
                    cp.int32(32))
            times = []
            for _ in range(30):
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(20):
                    f((8, batch), (256,), args, shared_mem=8 * 32 * 36 * 4)
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop) * 1e3 / 20)
            print(f"{batch}x{m} {cut:22} {statistics.median(times):7.2f} us a launch (registers {f.num_regs}, "
                  f"local {f.local_size_bytes} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The first panel (32 columns, all n rows) of a small batch on each of tsqr_wy's multi-block panel kernels,
timed alone with CUDA events: mb_panel (blocks over the GPU's SMs, a barrier in global memory), mb_cluster (a
cluster of MB_CLUSTER blocks, partial sums through global memory), reg_cluster (the rows in registers, the
sums through the cluster's shared memory) and col_cluster (a warp per column over the cluster), per call and per
column. Usage on a GPU machine:

    python bench/panel_probe.py [BATCH N ...]        (default: 8 2048 2 4096)
    python bench/panel_probe.py --dissect [BATCH N]   (default: 8 2048)
    python bench/panel_probe.py --single [BATCH N ...] (default: 40 176 40 352 60 512 60 1024 640 512)
    python bench/panel_probe.py --single --warps W [W ...] -- [BATCH N ...]

Each call factors the panel factored by the call before (the same work; only the values differ). --dissect
times reg_cluster1 compiled with parts of its column taken out (the results are wrong; the times say what each
part costs) and reg_panel1 on one block's rows alone (no cluster). --single times the one-block-a-matrix
panels instead: reg_panel (a thread's rows, all 32 columns) against tile_panel (a thread's rows of 8 columns,
RP_TILE) and col_panel (a warp per column), for panels
of at most 1024 rows; with --warps, reg_panel's and tile_panel's blocks of each of those warps (RP_WARPS) in turn.
"""

import sys

import cupy as cp
import torch
from apply_probe import load  # tsqr_wy's kernel.py as a module (bench/ is on the path when run as a script)

REPS = 50


def timed(fn) -> float:
    """Milliseconds a call, over REPS calls after one outside the timing."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPS):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / REPS


def probe(kernel, batch: int, n: int) -> None:
    A = torch.randn(batch, n, n, device="cuda")
    H, tau = A.clone(), torch.empty(batch, n, device="cuda")
    V, _G, T, part, rowbuf, counts = kernel._workspace(A)
    sms, ncols = kernel._sms(A.device), 32
    args = (kernel._ptr(H), kernel._ptr(tau), kernel._ptr(V), kernel._ptr(T), kernel._ptr(part), kernel._ptr(rowbuf),
            kernel._ptr(counts[0]), cp.int32(n), cp.int32(0), cp.int32(ncols))

    def multi_block(name, blocks, rows):
        def call():
            counts[0].zero_()  # mb_panel's barrier counts start at zero
            kernel._kernels(kernel.MB_WARPS)[name]((blocks, batch), (kernel.MB_WARPS * 32,),
                                                   (*args, cp.int32(rows), cp.int32(1)), shared_mem=rows * 33 * 4)
        return call

    spread = max(kernel.MB_ROWS, -(-n // max(1, sms // batch)))  # kernel._spread's rows when not clustered
    blocks = -(-n // spread)
    runs = {f"mb_panel ({blocks} blocks of {spread} rows)": multi_block("mb_panel", blocks, spread),
            f"mb_cluster ({kernel.MB_CLUSTER} blocks)": multi_block("mb_cluster", kernel.MB_CLUSTER,
                                                                     -(-n // kernel.MB_CLUSTER))}
    # reg_cluster with 1 and 2 rows a thread where both hold the panel (and tile_cluster with their rows, 8 columns a
    # thread: RP_TILE), and col_cluster where it does
    fits = [r for r in (1, 2) if n <= r * kernel.MB_CLUSTER * kernel.RP_WARPS * 32]
    clustered = [f"reg_cluster{r}" for r in fits] + [f"tile_cluster{4 * r}" for r in fits]
    clustered += [f"col_cluster{rows}" for rows in [kernel._col_cluster_rows(n)] if rows]
    for name in clustered:
        runs[name] = lambda name=name: kernel._in_registers(name, (kernel.MB_CLUSTER, batch), H, tau, V, T, 0,
                                                            ncols, 1)
    zero = lambda: counts[0].zero_()
    base = timed(zero)
    with cp.cuda.Device(A.device.index), kernel._stream(A.device):
        for label, fn in runs.items():
            ms = timed(fn) - (base if label.startswith("mb_") else 0)
            print(f"{batch}x{n} {label:40} {ms * 1e3:9.1f} us a panel, {ms * 1e3 / ncols:6.2f} us a column")


CUTS = {  # what --dissect takes out of the column of reg_cluster (common.cu's cluster_sums): (text, replacement) pairs
    "the cluster's exchange (a block barrier instead)": [
        ("  mbar_wait(&arrived[par], (j >> 1) & 1);", "  __syncthreads();"),
        ("  cluster_barrier();  // its release", "  __syncthreads();  // its release")],
    "the stores to the other blocks (to its own shared memory instead)": [
        ("      push(&sums[par][blockIdx.x][lane], q, s, bar);", "      sums[par][q][lane] = s;"),
        ("    if (lane == 0) mbar_expect(bar, (MB_CLUSTER + !lead) * 32 * 4);", "")],
}


def dissect(kernel, batch: int, n: int) -> None:
    A = torch.randn(batch, n, n, device="cuda")
    H, tau = A.clone(), torch.empty(batch, n, device="cuda")
    V, _G, T, *_ = kernel._workspace(A)
    # (a cluster barrier a column, CLUSTER_MBAR 0: the cuts would leave the mbarriers waiting for ever)
    options = ("--std=c++17", "-DNB=32", f"-DNWARPS={kernel.RP_WARPS}", f"-DMB_CLUSTER={kernel.MB_CLUSTER}",
               "-DCLUSTER_MBAR=0")

    def run(source, name, grid, h):
        f = cp.RawModule(code=source, options=options).get_function(name)
        threads, shared = kernel._panel_launch(name)
        f.max_dynamic_shared_size_bytes = shared
        m = h.shape[1]
        return timed(lambda: f(grid, (threads,), (kernel._ptr(h), kernel._ptr(tau), *kernel._strided(V),
                                                  *kernel._strided(T), cp.int32(m), cp.int32(0), cp.int32(32),
                                                  cp.int32(1)), shared_mem=shared))

    def cut(source, pairs):
        for text, replacement in pairs:
            assert source.count(text) == 1, text
            source = source.replace(text, replacement)
        return source

    variants = {"as it is": kernel._REG_SOURCE}
    for label, pairs in CUTS.items():
        variants[f"without {label}"] = cut(kernel._REG_SOURCE, pairs)
    variants["without both"] = cut(kernel._REG_SOURCE, [pair for pairs in CUTS.values() for pair in pairs])
    with cp.cuda.Device(A.device.index), kernel._stream(A.device):
        for label, source in variants.items():
            ms = run(source, "reg_cluster1", (kernel.MB_CLUSTER, batch), H)
            print(f"{batch}x{n} reg_cluster1 {label:60} {ms * 1e3 / 32:6.2f} us a column")
        rows = kernel.RP_WARPS * 32
        ms = run(kernel._REG_SOURCE, "reg_panel1", (batch,), H[:, :rows, :rows].contiguous())
        print(f"{batch}x{rows} reg_panel1 (one block a matrix, no cluster) {ms * 1e3 / 32:6.2f} us a column")


def single(kernel, batch: int, n: int) -> None:
    """The first panel of a batch whose panels take one block a matrix: reg_panel against tile_panel (its rows, 8
    columns a thread: RP_TILE) and col_panel."""
    A = torch.randn(batch, n, n, device="cuda")
    H, tau = A.clone(), torch.empty(batch, n, device="cuda")
    V, _G, T, *_ = kernel._workspace(A)
    rows = kernel._reg_rows(batch, n)
    names = [f"reg_panel{rows}", f"tile_panel{4 * rows}", f"col_panel{kernel._col_rows(batch, n)}"]
    with cp.cuda.Device(A.device.index), kernel._stream(A.device):
        for name in names:
            ms = timed(lambda name=name: kernel._in_registers(name, (batch,), H, tau, V, T, 0, 32, 1))
            print(f"{batch}x{n} {name:12} {ms * 1e3:9.1f} us a panel, {ms * 1e3 / 32:6.2f} us a column")


def main() -> int:
    kernel = load()
    # the warp-per-column kernels wherever they fit, whatever the defaults
    kernel.COL_PANEL_BELOW, kernel.COL_ROWS, kernel.COL_CLUSTER = 1 << 30, 32, 1
    if sys.argv[1:2] == ["--single"]:
        rest = sys.argv[2:]
        warps = [kernel.RP_WARPS]
        if rest[:1] == ["--warps"]:
            end = rest.index("--") if "--" in rest else len(rest)
            warps, rest = [int(x) for x in rest[1:end]], rest[end + 1:]
        pairs = [int(x) for x in rest] or [40, 176, 40, 352, 60, 512, 60, 1024, 640, 512]
        for count in warps:
            kernel.RP_WARPS = count
            for name in [name for name in kernel._REGISTERS if name.startswith(("reg_", "tile_"))]:
                del kernel._REGISTERS[name]  # reg_panel.cu's and tile_panel.cu's kernels, made for this many warps
            print(f"RP_WARPS = {kernel.RP_WARPS}")
            for batch, n in zip(pairs[::2], pairs[1::2]):
                single(kernel, batch, n)
        return 0
    if sys.argv[1:2] == ["--dissect"]:
        batch, n = [int(x) for x in sys.argv[2:4]] or [8, 2048]
        dissect(kernel, batch, n)
        return 0
    pairs = [int(x) for x in sys.argv[1:]] or [8, 2048, 2, 4096]
    for batch, n in zip(pairs[::2], pairs[1::2]):
        probe(kernel, batch, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

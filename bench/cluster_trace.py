"""When each block of tsqr_wy's clustered panels (tile_cluster, or reg_cluster) starts and ends, on the GPU's own
clock, in the seed's own calls: is a panel beside the trailing update slower because its clusters run slower, or
because they start late (a cluster needs MB_CLUSTER free SMs of one GPC at once, while the update's blocks fill
the GPU)?

A copy of the seed whose register panel (tile_panel.cu, or reg_panel.cu where its kernel.py has RP_TILE = 0) prints,
from thread 0 of every block, its matrix, rank, panel and %globaltimer at the kernel's start and end (nothing else
changes); each configuration is called a few times, the last call's
lines kept. Per panel: the span from its first block's start to its last block's end (what a profiler shows as the
kernel's duration), each cluster's own span, and how far apart the clusters' starts are. The seed as it ships (the
panel look-ahead in a CUDA graph: panels beside the update), then without the look-ahead (panels alone).

    python bench/cluster_trace.py [BATCH N ...] [--seed DIR]     (a GPU; default 2 4096 8 2048; DIR: another copy
                                                                  of tsqr_wy, an earlier commit's say)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from variant import variant  # (bench/ is the script's directory, first on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from evolver.search.tunables import find_tunables  # noqa: E402
SEED = ROOT / "seed_kernels" / "tsqr_wy"
CONFIGS = {"as it ships": {}, "without the look-ahead": {"LOOKAHEAD_BELOW": "0"}}
START = "  __shared__ float sums[2][CLUSTER ? MB_CLUSTER : 1][32];"  # the line the clock is read after (both files)
END = "  if (lead && warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);\n"
CLOCK = 'asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(rc_t{}));'


def panel_file(kernel_dir: Path) -> str:
    """The file of the clustered register panel kernel_dir's kernel.py launches (its RP_TILE, read as `tune` reads
    it): tile_cluster's or reg_cluster's."""
    values = {t.name: t.value for t in find_tunables({"kernel.py": (kernel_dir / "kernel.py").read_text()})}
    return "tile_panel.cu" if int(values.get("RP_TILE", "0")) else "reg_panel.cu"


def traced_copy(overrides: dict[str, str], seed: Path = SEED) -> Path:
    """The seed's directory copied with kernel.py's constants set (bench/variant.py), its register panel printing
    each block's start and end."""
    copy = variant(seed, [f"{name}={value}" for name, value in overrides.items()])
    path = copy / panel_file(copy)
    lines = path.read_text().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(START)]
    assert len(starts) == 1 and lines.count(END) == 1, path
    lines.insert(starts[0] + 1, "  size_t rc_t0;\n  " + CLOCK.format(0) + "\n")
    printed = ("  size_t rc_t1;\n  " + CLOCK.format(1) + "\n  if (threadIdx.x == 0) printf("
               '"rc %u %u %d %llu %llu\\n", mat, CLUSTER ? blockIdx.x : 0, k, '
               "(unsigned long long)rc_t0, (unsigned long long)rc_t1);\n")
    path.write_text("".join(lines).replace(END, END + printed))
    return copy


def child(directory: str, batch: int, n: int) -> None:
    """Three calls; a marker line before the last, so that the parent keeps only its blocks' lines."""
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("traced", Path(directory) / "kernel.py")
    assert spec is not None and spec.loader is not None
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    A = torch.randn(batch, n, n, device="cuda")
    for call in range(3):
        torch.cuda.synchronize()
        if call == 2:
            print("last call", flush=True)
        kernel.custom_kernel(A)
        torch.cuda.synchronize()


def summary(lines: list[str]) -> str:
    blocks: dict[int, list[tuple[int, int, int, int]]] = {}
    for line in lines:
        mat, rank, k, t0, t1 = map(int, line.split()[1:])
        blocks.setdefault(k, []).append((mat, rank, t0, t1))
    spans, clusters, apart, inside = [], [], [], []
    for rows in blocks.values():
        first, last = min(r[2] for r in rows), max(r[3] for r in rows)
        spans.append((last - first) / 1e3)
        starts = []
        for mat in {r[0] for r in rows}:
            mine = [r for r in rows if r[0] == mat]
            clusters.append((max(r[3] for r in mine) - min(r[2] for r in mine)) / 1e3)
            inside.append((max(r[2] for r in mine) - min(r[2] for r in mine)) / 1e3)
            starts.append(min(r[2] for r in mine))
        apart.append((max(starts) - min(starts)) / 1e3)
    med = statistics.median
    return (f"{len(blocks)} panels: span (first start to last end) median {med(spans):.1f} us, sum {sum(spans):.0f}; "
            f"a cluster's span median {med(clusters):.1f} us; its blocks' starts apart median {med(inside):.2f} us "
            f"(max {max(inside):.2f}); the clusters' starts apart median {med(apart):.1f} us (max {max(apart):.1f})")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), int(argv[3]))
        return 0
    seed = Path(argv[argv.index("--seed") + 1]) if "--seed" in argv else SEED
    argv = [a for i, a in enumerate(argv) if a != "--seed" and (i == 0 or argv[i - 1] != "--seed")]
    sizes = [int(a) for a in argv] or [2, 4096, 8, 2048]
    for batch, n in zip(sizes[::2], sizes[1::2]):
        for label, overrides in CONFIGS.items():
            copy = traced_copy(overrides, seed)
            out = subprocess.run([sys.executable, __file__, "--child", str(copy), str(batch), str(n)],
                                 capture_output=True, text=True, timeout=600)
            if out.returncode:
                print(f"{batch}x{n} {label}: failed: {out.stderr[-1000:]}")
                continue
            last = out.stdout.split("last call\n", 1)[1].splitlines()
            print(f"{batch}x{n} {label}: {summary([l for l in last if l.startswith('rc ')])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

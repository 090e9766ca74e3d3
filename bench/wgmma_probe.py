"""Issue "the seed at 60x": tsqr_wy's C -= V W on Hopper's warpgroup MMA (wgmma.cu's wg_update, C += s V Wn in split
TF32 with C the accumulator), launched by kernel.py's own _wg_update, against cuBLAS's FP32 (640x512's and
60x1024's updates before WG_FROM) and the seed's mma.sync tf32x3_update. First how the module compiles for sm_90a
(CuPy appends its own -arch=sm_90 to the options; `route` says which route gave wgmma), then its largest error
against float64 (relative to the result's largest value) on edge shapes and both signs, then milliseconds per call
(CUDA events, median of 20) on the seed's shapes, with wg_update's row groups varied. Its earlier companions
(wg_vtc, V^T C; wg_update_piped, C's next tiles staged by cp.async; the step-at-a-time chain) lost here and were
removed (NOTES.md).

    python bench/wgmma_probe.py            (on an H100 or H200)
"""

import sys

import cupy as cp
import torch
from apply_probe import load, timed  # (bench/ is the script's directory, first on sys.path)


def route(k, defines=()):
    """wgmma.cu's module for kernel.py `k` to launch (in its _WG), and whether it was compiled with wgmma (its
    wg_compiled says 1): CuPy's RawModule with -arch=sm_90a among the options, as kernel.py's _wg makes it, or else
    NVRTC through CuPy's bindings, the cubin loaded as a module."""
    try:
        module = cp.RawModule(code=k._WG_SOURCE, options=("--std=c++17", "-arch=sm_90a", *defines))
        module.get_function("wg_compiled")
        print("route: RawModule with -arch=sm_90a")
    except Exception as exc:  # noqa: BLE001 (a probe: say what failed, try the other route)
        print(f"route: RawModule failed ({str(exc).splitlines()[0][:200]}); NVRTC directly")
        from cupy.cuda import nvrtc
        program = nvrtc.createProgram(k._WG_SOURCE, "wgmma.cu", [], [])
        nvrtc.compileProgram(program, ["--std=c++17", "-arch=sm_90a", *defines])
        module = cp.cuda.function.Module()
        module.load(nvrtc.getCUBIN(program))
    for name, shared in k._WG_SHARED.items():
        k._WG[name] = module.get_function(name)
        k._WG[name].max_dynamic_shared_size_bytes = shared
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    module.get_function("wg_compiled")((1,), (1,), (cp.uint64(flag.data_ptr()),))
    torch.cuda.synchronize()
    return int(flag.item())


def case(batch, m, N, w, offset=0):
    """V, Wn and C a view at column `offset` of a square batch (C's row stride the matrix's, as in the seed; even, as
    kernel.py's _tf32x3_fits requires of wgmma.cu's float2 rows: 7x7 misaligned them, H100, run111)."""
    n = max(m, N + offset)
    H = torch.randn(batch, n, n, device="cuda")
    V, Wn = torch.randn(batch, m, w, device="cuda"), torch.randn(batch, w, N, device="cuda")
    return V, Wn, H[:, n - m:, offset:offset + N]


def error(C, C0, V, Wn, s):
    ref = C0.double() + s * torch.bmm(V.double(), Wn.double())
    return ((C.double() - ref).abs().max() / ref.abs().max()).item()


def main(argv):
    k = load()
    ok = route(k)
    print(f"compiled: wg_compiled says {ok} (1: wgmma)", flush=True)
    if not ok:
        return 1
    worst = check(k)
    if worst > 1e-5:  # the A fragment's other order (a1 and a2 exchanged), as a diagnosis
        print(f"WRONG: largest error {worst:.2e}; where single elements land:")
        layout(k)
        print("with a1 and a2 exchanged:")
        route(k, ("-DWG_ROW(e)=((e)>>1)", "-DWG_COL(e)=((e)&1)"))
        check(k)
        layout(k)
        return 1
    time_all(k)
    return 0


def check(k):
    """The largest error of wg_update over edge shapes, each printed beside FP32's."""
    worst = 0.0
    for batch, m, N, w, offset, s in [(3, 100, 70, 24, 6, 1.0), (2, 64, 128, 64, 0, -1.0), (5, 200, 330, 32, 2, -1.0),
                                      (4, 512, 448, 64, 64, 1.0), (2, 1024, 992, 32, 32, -1.0), (1, 8, 2, 8, 0, 1.0)]:
        V, Wn, C = case(batch, m, N, w, offset)
        C0 = C.clone()
        k._wg_update(V, Wn, C, s)
        torch.cuda.synchronize()
        e = error(C, C0, V, Wn, s)
        C.copy_(C0)
        C.baddbmm_(V, Wn, alpha=s)
        print(f"{batch}x({m}x{N}) w={w} s={s:+.0f}: wg_update {e:.2e}, FP32 baddbmm {error(C, C0, V, Wn, s):.2e}",
              flush=True)
        worst = max(worst, e)
    return worst


def layout(k):
    """Where one element of V lands, for a diagnosis: V one-hot at (r, j), Wn[j', c] = 256 j' + c + 1, so that
    C = V Wn is row r of Wn at row r; each nonzero of C is decoded as (its row, the j' and c its value names)."""
    m, N, w = 64, 128, 16
    Wn = (256 * torch.arange(w, device="cuda")[:, None] + torch.arange(N, device="cuda") + 1).float()[None]
    for r, j in [(0, 0), (1, 0), (0, 1), (8, 3), (17, 9), (63, 15)]:
        V = torch.zeros(1, m, w, device="cuda")
        V[0, r, j] = 1.0
        C = torch.zeros(1, m, N, device="cuda")
        k._wg_update(V, Wn, C, 1.0)
        torch.cuda.synchronize()
        print(f"  V[{r},{j}] = 1: C += V Wn {decode(C[0], 'row')} (right: row {r} <- j' {j}, c = column)", flush=True)


def decode(X, what):
    rows, cols = X.nonzero(as_tuple=True)
    if not len(rows):
        return "all zero"
    values = X[rows, cols].round().long() - 1
    firsts = sorted({(int(r), int(v) // 256) for r, v in zip(rows.tolist(), values.tolist())})[:6]
    shifted = int(((values % 256) != cols).sum())
    return f"{len(rows)} nonzero, ({what}, source row) {firsts}, {shifted} with the column shifted"


def time_all(k):
    for batch, m, N, w in [(640, 512, 448, 64), (640, 320, 256, 64), (640, 512, 32, 32), (60, 1024, 960, 64),
                           (60, 512, 448, 64), (8, 2048, 2016, 32)]:
        V, Wn, C = case(batch, m, N, w, w)
        line = [f"{batch}x({m}x{N}) w={w}:"]
        line.append(f"FP32 baddbmm {timed(lambda: C.baddbmm_(V, Wn, alpha=-1.0)):.3f}")
        line.append(f"tf32x3_update {timed(lambda: k._tf32x3_update(V, Wn, C)):.3f}")
        for groups in (None, 1, 2, 4, 8):
            ms = timed(lambda: k._wg_update(V, Wn, C, 1.0, groups))
            line.append(f"wg_update(groups {groups or 'auto'}) {ms:.3f}")
        print(" ".join(line), flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

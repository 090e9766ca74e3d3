"""Issue "the seed at 60x": could cuBLAS's own TF32 tensor-core GEMM carry tsqr_wy's trailing update at FP32's
accuracy? The update C += V Wn is made in split TF32 as ONE cuBLAS call whose inner dimension is stacked,
[V_hi V_hi V_lo] [Wn_hi; Wn_lo; Wn_hi] (each hi exactly a TF32 value, so the tensor cores' products are exact and
only lo lo is dropped, as tf32x3.cu drops it), C read and written once. Timed against torch's FP32 baddbmm (what
640x512 runs now: cuBLAS's sm80 FP32 kernels, 2.1 ms of its 7.5) and the seed's tf32x3_update (60x1024, 8x2048,
2x4096), with each one's error against float64. W = V^T C beside it: FP32 bmm, the seed's tf32x3_vtc, and split
TF32 by cuBLAS with C's split written out (C read once more and its two halves written and read).
The GEMMs are cuBLAS's through CuPy (`cupy.cuda.cublas`, compute type CUBLAS_COMPUTE_32F_FAST_TF32), so no global
flag of torch's changes. Milliseconds per call, CUDA events, median of 20; the sums over 640x512's seven outer
updates (OUTER_NB = 64) at the end.

    python bench/tf32_gemm_probe.py            (on a GPU machine; about a minute)
"""

import sys

import torch
from apply_probe import load, timed  # (bench/ is the script's directory, first on sys.path)
from cupy.cuda import cublas, device

R_32F, FAST_TF32, TENSOR_OP = 0, getattr(cublas, "CUBLAS_COMPUTE_32F_FAST_TF32", 77), 99
ONE, ZERO = torch.ones(1), torch.zeros(1)  # host scalars (the handle's pointer mode is host)


def split(x):
    """hi = x rounded to TF32 (as cvt.rna), lo = x - hi (exact in FP32)."""
    hi = ((x.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)
    return hi, x - hi


def operand(Y):
    """(op, ld) that make cuBLAS's column-major view of the row-major batched matrix Y read Y^T."""
    if Y.stride(-1) == 1:
        return 0, Y.stride(-2)
    assert Y.stride(-2) == 1
    return 1, Y.stride(-1)


def gemm(A, B, C, beta, compute=FAST_TF32):
    """C = A B + beta C for row-major batched A (M x K), B (K x N), C (M x N): cuBLAS computes C^T = B^T A^T."""
    batch, M, K = A.shape
    N = B.shape[2]
    assert C.stride(-1) == 1 and B.shape[1] == K and C.shape[1:] == (M, N)
    handle = device.get_cublas_handle()  # CuPy sets its stream to CuPy's current one: torch's, in main()
    (opb, ldb), (opa, lda) = operand(B), operand(A)
    cublas.gemmStridedBatchedEx(handle, opb, opa, N, M, K, ONE.data_ptr(), B.data_ptr(), R_32F, ldb, B.stride(0),
                                A.data_ptr(), R_32F, lda, A.stride(0), (ONE if beta else ZERO).data_ptr(),
                                C.data_ptr(), R_32F, C.stride(-2), C.stride(0), batch, compute, TENSOR_OP)


def update_tf32(V, Wn, C):
    """C += V Wn in split TF32, one cuBLAS call with the inner dimension stacked three times."""
    Vh, Vl = split(V)
    Wh, Wl = split(Wn)
    gemm(torch.cat([Vh, Vh, Vl], 2), torch.cat([Wh, Wl, Wh], 1), C, 1)


def vtc_tf32(V, C):
    """V^T C in split TF32 by cuBLAS: C's halves written out, [V_hi V_lo]^T C_hi + V_hi^T C_lo."""
    Vh, Vl = split(V)
    Ch, Cl = split(C)
    w = V.shape[2]
    P = torch.empty(V.shape[0], 2 * w, C.shape[2], device=C.device)
    gemm(torch.cat([Vh, Vl], 2).transpose(1, 2), Ch, P, 0)
    W = P[:, :w] + P[:, w:]
    gemm(Vh.transpose(1, 2), Cl, W, 1)
    return W


def error(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


def probe(k, batch, m, N, w):
    V, C0 = torch.randn(batch, m, w, device="cuda") / m ** 0.5, torch.randn(batch, m, N, device="cuda")
    Wn = torch.randn(batch, w, N, device="cuda")
    C = C0.clone()
    want_u = C0.double() + V.double() @ Wn.double()
    want_w = V.double().transpose(1, 2) @ C0.double()
    fits = k._tf32x3_fits(V, C)
    ways = {"fp32 baddbmm": lambda: C.baddbmm_(V, Wn), "tf32 cuBLAS stacked": lambda: update_tf32(V, Wn, C)}
    if fits:
        ways["seed tf32x3_update"] = lambda: k._tf32x3_update(V, Wn, C)
    out = {}
    for name, fn in ways.items():
        C.copy_(C0)
        fn()
        err = error(C, want_u)
        out[name] = timed(lambda fn=fn: (C.copy_(C0), fn())[1]) - timed(lambda: C.copy_(C0))
        print(f"  update {name:22} {out[name]:8.3f} ms  error {err:.1e}")
    for name, fn in (("fp32 bmm", lambda: torch.bmm(V.transpose(1, 2), C0)), ("tf32 cuBLAS split C", lambda: vtc_tf32(V, C0)),
                     *((("seed tf32x3_vtc", lambda: k._tf32x3_vtc(V, C0)),) if fits else ())):
        err = error(fn(), want_w)
        out["W " + name] = timed(fn)
        print(f"  W=V^T C {name:21} {out['W ' + name]:8.3f} ms  error {err:.1e}")
    return out


def main(argv):
    k = load()
    print(torch.cuda.get_device_name(), torch.__version__)
    with device.Device(0), k._stream(torch.device("cuda", 0)):
        outer = [(640, 512 - 64 * i, 448 - 64 * i, 64) for i in range(7)]
        sums = {}
        for shape in outer + [(60, 1024, 992, 32), (60, 768, 736, 32), (8, 2048, 2016, 32), (2, 4096, 4064, 32)]:
            print(f"{shape[0]}x({shape[1]}x{shape[2]}) w={shape[3]}:")
            for name, ms in probe(k, *shape).items():
                if shape in outer:
                    sums[name] = sums.get(name, 0.0) + ms
        print("640x512's seven outer updates, summed:", ", ".join(f"{n} {ms:.3f} ms" for n, ms in sums.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

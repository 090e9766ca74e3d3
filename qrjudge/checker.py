"""The correctness gates of the QR contract, per matrix, in float64 with TF32 off.

Q is built from (H, tau) in float32, R = triu(H). The contract names torch.linalg.householder_product for Q;
`householder_q` builds the same product of reflectors in float32 through its compact WY form (as LAPACK's
orgqr does), with batched GEMMs instead of cuSOLVER's one-matrix-at-a-time loop, which dominated the
harness's checking time on large batches. Both agree to rounding (tests/test_harness_cpu.py). Residuals are scaled so that the gate is a plain number:
factor = ||R - Q^T A||_1 / (n eps ||A||_1) <= 20, orth = ||Q^T Q - I||_1 / (n eps) <= 100.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from qrjudge.cases import EPS

FACTOR_GATE = 20.0
ORTH_GATE = 100.0
CHUNK_BYTES = 2 << 30  # float64 working set per chunk of the batch


@dataclass
class Verdict:
    ok: bool
    reason: str = ""
    factor: float = 0.0  # worst scaled residuals over the batch
    orth: float = 0.0
    recon: float = 0.0
    matrix: int | None = None  # first failing matrix


@contextlib.contextmanager
def strict_fp32() -> Iterator[None]:
    """TF32 off for the checker's own products, whatever a candidate set; restored afterwards."""
    try:
        precision: str | None = torch.get_float32_matmul_precision()
    except RuntimeError:  # torch >= 2.9 refuses to say after the flags below were set, then set again
        precision = None
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
        if precision is not None:
            torch.set_float32_matmul_precision(precision)


def _norm1(x: torch.Tensor) -> torch.Tensor:
    """Matrix 1-norm (largest column absolute sum) of each matrix of a batch."""
    return x.abs().sum(dim=-2).amax(dim=-1)


# Bound when the judge's modules are imported, before any candidate exists, as the C functions they are (a replaced
# attribute of torch._C is not them).
_MODE_DEPTHS = {"function": torch._C._len_torch_function_stack, "dispatch": torch._C._len_torch_dispatch_stack}


def modes_left() -> str:
    """'' unless a torch function or dispatch mode of the candidate's is still active: its code would run in the
    runner's own torch calls (its checks, the copy of the outputs) after the timed region."""
    return next((f"a torch {kind} mode left active by the candidate's code" for kind, depth in _MODE_DEPTHS.items()
                 if depth()), "")


def as_pair(out: Any) -> Any:
    """A tuple or list the candidate returned, as a plain tuple, read through the base class's own methods: a
    subclass's `__iter__` or `__getitem__` never runs (the runner's checks would run the candidate's code after the
    timed region). Anything else as it is, for `sanity` to name."""
    kind = type(out)
    base: Any = tuple if issubclass(kind, tuple) else list if issubclass(kind, list) else None
    if base is None or base.__len__(out) != 2:
        return out
    return base.__getitem__(out, 0), base.__getitem__(out, 1)


def sanity(a: torch.Tensor, out: object) -> str:
    """'' when `out` has the contract's form, otherwise what is wrong."""
    out = as_pair(out)
    if type(out) is not tuple or len(out) != 2:
        return f"custom_kernel must return (H, tau), got {type(out).__name__}"
    h, tau = out
    if type(h) is not torch.Tensor or type(tau) is not torch.Tensor:  # a subclass's methods would run in the checks
        return "H and tau must be plain torch tensors (torch.Tensor itself, not a subclass)"
    b, n, _ = a.shape
    for name, t, shape in (("H", h, (b, n, n)), ("tau", tau, (b, n))):
        if tuple(t.shape) != shape:
            return f"{name} has shape {tuple(t.shape)}, expected {shape}"
        if t.dtype != torch.float32:
            return f"{name} has dtype {t.dtype}, expected torch.float32"
        if t.device != a.device:
            return f"{name} is on {t.device}, expected {a.device}"
        if not t.is_contiguous():
            return f"{name} is not contiguous"
    if h.data_ptr() == a.data_ptr():
        return "H shares memory with the input A (outputs must be fresh tensors)"
    if not bool(torch.isfinite(h).all() & torch.isfinite(tau).all()):  # one synchronisation, not two
        bad = (~torch.isfinite(h)).flatten(1).any(1) | (~torch.isfinite(tau)).any(1)
        return f"non-finite values (NaN or inf) in the output of matrix {int(bad.nonzero()[0])}"
    return ""


def householder_q(h: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """Q = H_1 H_2 ... H_n, H_i = I - tau_i v_i v_i^T, in float32: Q = I - V T V^T with the upper triangular
    T of the compact WY form built by recursive doubling, T = [[T1, -T1 (V1^T V2) T2], [0, T2]]: products
    only, never an inverse, so it is as stable as LAPACK's larft recurrence even for garbage tau."""
    b, n, _ = h.shape
    size = 1 << max(0, (n - 1).bit_length())  # padded with zero reflectors (tau = 0: the identity)
    dt, dev = torch.float32, h.device
    v = torch.zeros(b, n, size, dtype=dt, device=dev)
    v[..., :n] = torch.tril(h.to(dt), -1) + torch.eye(n, dtype=dt, device=dev)
    t = torch.diag_embed(torch.nn.functional.pad(tau.to(dt), (0, size - n)))
    g = v.transpose(-2, -1) @ v
    s = 1
    while s < size:
        k = size // (2 * s)

        def diagonal_blocks(x: torch.Tensor, k: int = k, s: int = s) -> torch.Tensor:  # (b, k, 2s, 2s) views
            return x.view(b, k, 2 * s, k, 2 * s).diagonal(dim1=1, dim2=3).permute(0, 3, 1, 2)

        tb, gb = diagonal_blocks(t), diagonal_blocks(g)
        tb[..., :s, s:] = -(tb[..., :s, :s] @ gb[..., :s, s:] @ tb[..., s:, s:])
        s *= 2
    return torch.eye(n, dtype=dt, device=dev) - v @ t @ v.transpose(-2, -1)


def check(a: torch.Tensor, h: torch.Tensor, tau: torch.Tensor, diagnostics: bool = True) -> Verdict:
    """Gate every matrix of the batch; the verdict names the first failing matrix. Without `diagnostics`
    the reconstruction residual (not a gate) is skipped: a third less float64 work for timed calls."""
    problem = sanity(a, (h, tau))
    if problem:
        return Verdict(False, problem)
    b, n, _ = a.shape
    size = 1 << max(0, (n - 1).bit_length())
    per = max(1, CHUNK_BYTES // max(1, n * n * 8 * 6 + size * size * 4 * 3))
    worst = Verdict(True)
    with strict_fp32():
        for lo in range(0, b, per):
            hi = min(b, lo + per)
            q = householder_q(h[lo:hi], tau[lo:hi]).double()
            r = torch.triu(h[lo:hi].double())
            a64 = a[lo:hi].double()
            anorm = _norm1(a64)
            qta = q.transpose(-2, -1) @ a64
            factor_abs = _norm1(r - qta)
            factor = torch.where(anorm > 0, factor_abs / (n * EPS * anorm.clamp_min(1e-300)),
                                 torch.where(factor_abs > 0, torch.inf, 0.0))
            eye = torch.eye(n, dtype=torch.float64, device=a.device)
            orth = _norm1(q.transpose(-2, -1) @ q - eye) / (n * EPS)
            recon = _norm1(q @ r - a64) / (n * EPS * anorm.clamp_min(1e-300)) if diagnostics else anorm * 0
            bad = (factor > FACTOR_GATE) | (orth > ORTH_GATE) | ~torch.isfinite(factor) | ~torch.isfinite(orth)
            # One synchronisation per chunk: on a GPU shared with a runner (or another evaluation) each one can
            # wait for the other context's time slice.
            most = torch.stack([factor.max(), orth.max(), recon.max(), bad.any().double()])  # all float64
            top_factor, top_orth, top_recon, any_bad = most.tolist()
            worst.factor = max(worst.factor, top_factor)
            worst.orth = max(worst.orth, top_orth)
            worst.recon = max(worst.recon, top_recon)
            if any_bad and worst.ok:
                i = int(bad.nonzero()[0])
                worst.ok = False
                worst.matrix = lo + i
                worst.reason = (f"matrix {lo + i} of the batch fails the gates: factor {float(factor[i]):.3g} "
                                f"(gate {FACTOR_GATE:g}), orthogonality {float(orth[i]):.3g} (gate {ORTH_GATE:g})")
    return worst

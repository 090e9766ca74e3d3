"""The correctness gates of the QR contract, per matrix, in float64 with TF32 off.

Q is built from (H, tau) with torch.linalg.householder_product in float32 (the checker may use the
library; candidates may not), R = triu(H). Residuals are scaled so that the gate is a plain number:
factor = ||R - Q^T A||_1 / (n eps ||A||_1) <= 20, orth = ||Q^T Q - I||_1 / (n eps) <= 100.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from harness.cases import EPS

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
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[0], saved[1]
        torch.set_float32_matmul_precision(saved[2])


def _norm1(x: torch.Tensor) -> torch.Tensor:
    """Matrix 1-norm (largest column absolute sum) of each matrix of a batch."""
    return x.abs().sum(dim=-2).amax(dim=-1)


def sanity(a: torch.Tensor, out: object) -> str:
    """'' when `out` has the contract's form, otherwise what is wrong."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        return f"custom_kernel must return (H, tau), got {type(out).__name__}"
    h, tau = out
    if not isinstance(h, torch.Tensor) or not isinstance(tau, torch.Tensor):
        return "H and tau must be torch tensors"
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
    if not bool(torch.isfinite(h).all()) or not bool(torch.isfinite(tau).all()):
        bad = (~torch.isfinite(h)).flatten(1).any(1) | (~torch.isfinite(tau)).any(1)
        return f"non-finite values (NaN or inf) in the output of matrix {int(bad.nonzero()[0])}"
    return ""


def check(a: torch.Tensor, h: torch.Tensor, tau: torch.Tensor) -> Verdict:
    """Gate every matrix of the batch; the verdict names the first failing matrix."""
    problem = sanity(a, (h, tau))
    if problem:
        return Verdict(False, problem)
    b, n, _ = a.shape
    per = max(1, CHUNK_BYTES // max(1, n * n * 8 * 6))
    worst = Verdict(True)
    with strict_fp32():
        for lo in range(0, b, per):
            hi = min(b, lo + per)
            q = torch.linalg.householder_product(h[lo:hi], tau[lo:hi]).double()
            r = torch.triu(h[lo:hi].double())
            a64 = a[lo:hi].double()
            anorm = _norm1(a64)
            qta = q.transpose(-2, -1) @ a64
            factor_abs = _norm1(r - qta)
            factor = torch.where(anorm > 0, factor_abs / (n * EPS * anorm.clamp_min(1e-300)),
                                 torch.where(factor_abs > 0, torch.inf, 0.0))
            eye = torch.eye(n, dtype=torch.float64, device=a.device)
            orth = _norm1(q.transpose(-2, -1) @ q - eye) / (n * EPS)
            recon_abs = _norm1(q @ r - a64)
            recon = recon_abs / (n * EPS * anorm.clamp_min(1e-300))
            worst.factor = max(worst.factor, float(factor.max()))
            worst.orth = max(worst.orth, float(orth.max()))
            worst.recon = max(worst.recon, float(recon.max()))
            bad = (factor > FACTOR_GATE) | (orth > ORTH_GATE) | ~torch.isfinite(factor) | ~torch.isfinite(orth)
            if bool(bad.any()) and worst.ok:
                i = int(bad.nonzero()[0])
                worst.ok = False
                worst.matrix = lo + i
                worst.reason = (f"matrix {lo + i} of the batch fails the gates: factor {float(factor[i]):.3g} "
                                f"(gate {FACTOR_GATE:g}), orthogonality {float(orth[i]):.3g} (gate {ORTH_GATE:g})")
    return worst

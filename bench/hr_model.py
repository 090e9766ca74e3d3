"""hr_panel.cu's arithmetic on the CPU (float32, numpy): a panel by CholeskyQR2 and Householder reconstruction,
reg_panel's reflectors where it is ill-conditioned, in a blocked QR whose trailing updates are FP32; each batch
judged by the contract's own checker (qrjudge/checker.py), beside torch.geqrf, with how many panels took each path.
It says whether the method holds for the contract's cases before any device time is spent; tests/test_cuda_on_cpu.py
runs the kernel's own source, bench/seed_model.py kernel.py's orchestration with this as hr_cluster's stand-in.

    python bench/hr_model.py                      (every case of `final` at 2 x 1024, and 1 x 4096; about a minute)
    python bench/hr_model.py 2:2048:1:dense ...   (batch:n:cond:case)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qrjudge.cases import make_batch  # noqa: E402
from qrjudge.checker import check  # noqa: E402
from qrjudge.specs import CASES, Spec  # noqa: E402

f32 = np.float32
HR_TOL = 0.1  # hr_panel.cu's: Q1's Gram matrix at most this far from I, entry by entry


def chol_upper(G: np.ndarray) -> np.ndarray | None:
    """R upper with G = R^T R from G's upper triangle, as chol_warp (right-looking, float32); None where a pivot is
    not positive and finite."""
    G, R = np.triu(G).astype(f32), np.zeros(G.shape, f32)
    for i in range(G.shape[0]):
        if not 0 < G[i, i] < 3e38:
            return None
        R[i, i] = np.sqrt(G[i, i])
        R[i, i + 1:] = G[i, i + 1:] / R[i, i]
        G[i + 1:, i + 1:] -= np.triu(np.outer(R[i, i + 1:], R[i, i + 1:])).astype(f32)
    return R


def solve_upper(X: np.ndarray, R: np.ndarray) -> np.ndarray:
    """X R^-1, column by column (solve_rows)."""
    Y = np.zeros(X.shape, f32)
    for c in range(R.shape[0]):
        Y[:, c] = (X[:, c] - Y[:, :c] @ R[:c, c]) * (f32(1) / R[c, c])
    return Y


def hr_panel(P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The m x 32 panel P (m >= 64) as hr_panel.cu factors it: (P factored: S R above, V below; tau; T), or None
    where it gives the panel to reg_panel (a Cholesky's pivot, or Q1's Gram matrix farther than HR_TOL from I)."""
    b = P.shape[1]
    R1 = chol_upper((P.T @ P).astype(f32))
    if R1 is None:
        return None
    Q1 = solve_upper(P, R1)
    G2 = (Q1.T @ Q1).astype(f32)
    if not np.all(np.abs(np.triu(G2) - np.eye(b, dtype=f32))[np.triu_indices(b)] < HR_TOL):
        return None
    R2 = chol_upper(G2)
    if R2 is None:
        return None
    Q = solve_upper(Q1, R2)
    W, U, L, S = Q[:b].copy(), np.zeros((b, b), f32), np.eye(b, dtype=f32), np.zeros(b, f32)
    for i in range(b):  # the LU of Q's top rows less S, S chosen so that every pivot is at least 1 in size
        S[i] = -1 if W[i, i] >= 0 else 1
        U[i, i], U[i, i + 1:] = W[i, i] - S[i], W[i, i + 1:]
        L[i + 1:, i] = W[i + 1:, i] / U[i, i]
        W[i + 1:, i + 1:] -= np.outer(L[i + 1:, i], U[i, i + 1:]).astype(f32)
    below = solve_upper(Q[b:], U)
    T = np.zeros((b, b), f32)
    for j in range(b):  # T = -U S L^-T: T L^T = -U S, forward, row by row at once
        T[:, j] = np.where(np.arange(b) <= j, -U[:, j] * S[j], 0) - T[:, :j] @ L[j, :j]
    R = (S[:, None] * (R2 @ R1)).astype(f32)
    return np.vstack([np.triu(R) + np.tril(L, -1), below]), np.diag(T).copy(), T


def householder_panel(P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's reflectors for P (reg_panel's, to rounding) and larft's T."""
    h, tau = (x.numpy() for x in torch.geqrf(torch.from_numpy(P)))
    b = P.shape[1]
    V = np.tril(h, -1) + np.eye(*h.shape, dtype=f32)
    T = np.zeros((b, b), f32)
    for j in range(b):
        T[:j, j] = -tau[j] * (T[:j, :j] @ (V[:, :j].T @ V[:, j]))
        T[j, j] = tau[j]
    return h, tau, T


def blocked_qr(A: np.ndarray, counts: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """A blocked QR in panels of 32: hr_panel where it takes the panel (full width, at least 64 rows), else LAPACK's
    reflectors; the trailing columns updated in FP32."""
    A, n = A.copy(), A.shape[0]
    tau = np.zeros(n, f32)
    for k in range(0, n, 32):
        b = min(32, n - k)
        P = A[k:, k:k + b]
        out = hr_panel(P) if b == 32 and n - k >= 64 else None
        counts["hr" if out is not None else "householder"] = counts.get("hr" if out is not None else "householder",
                                                                        0) + 1
        H, t, T = out if out is not None else householder_panel(P)
        A[k:, k:k + b], tau[k:k + b] = H, t
        if k + b < n:
            V = np.tril(H, -1) + np.eye(*H.shape, dtype=f32)
            C = A[k:, k + b:]
            A[k:, k + b:] = C - V @ (T.T @ (V.T @ C)).astype(f32)
    return A, tau


def judge(spec: Spec, seed: int = 7) -> bool:
    a = make_batch(spec, seed, "cpu")
    counts: dict[str, int] = {}
    out = [blocked_qr(m, counts) for m in a.numpy()]
    verdict = check(a, torch.from_numpy(np.stack([h for h, _ in out])), torch.from_numpy(np.stack([t for _, t in out])))
    lapack = check(a, *torch.geqrf(a))
    print(f"{spec.batch}x{spec.n} {spec.case:13} cond {spec.cond:g}: {'ok' if verdict.ok else 'FAILED'} factor "
          f"{verdict.factor:.2f} orth {verdict.orth:.2f} (gates 20, 100; geqrf {lapack.factor:.2f}, {lapack.orth:.2f})"
          f"; panels {counts}", flush=True)
    return verdict.ok


def main(argv: list[str]) -> int:
    specs = [Spec(int(b), int(n), float(c), case) for b, n, c, case in (s.split(":") for s in argv)] or \
        [*(Spec(2, 1024, 2, case) for case in CASES), Spec(2, 1024, 0, "clustered"), Spec(1, 2048, 0, "rankdef"),
         Spec(1, 4096, 1, "dense")]
    return 0 if all([judge(spec) for spec in specs]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

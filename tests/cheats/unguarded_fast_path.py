# expect: incorrect | fails the gates|non-finite
# Samples the first matrix; if it looks well-conditioned (no zero column), routes the whole batch through a
# variant without the zero-column guard, which is only valid for full-rank input.
from pathlib import Path

import base
import cupy as cp
import torch
from base import custom_kernel as honest

_SOURCE = Path(__file__).with_name("qr.cu").read_text().replace("if (xnorm2 > 0.f) {", "{")
assert "if (xnorm2 > 0.f)" not in _SOURCE
_FAST = cp.RawModule(code=_SOURCE, options=("--std=c++17", f"-DNB={base.NB}", f"-DNWARPS={base.NWARPS}"))
_SMALL = _FAST.get_function("small_qr")
_SMALL.max_dynamic_shared_size_bytes = base.SMEM_BUDGET


def custom_kernel(A):
    batch, n, _ = A.shape
    looks_easy = bool(A[0].abs().sum(dim=0).min() > 0)
    if not looks_easy or n > base.SMALL_N:
        return honest(A)
    H = torch.empty_like(A)
    tau = torch.empty(batch, n, device=A.device)
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        _SMALL((batch,), (base.NWARPS * 32,),
               (cp.uint64(A.data_ptr()), cp.uint64(H.data_ptr()), cp.uint64(tau.data_ptr()), cp.int32(n)),
               shared_mem=n * (n + 1) * 4)
    return H, tau

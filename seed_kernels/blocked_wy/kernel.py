"""Blocked Householder QR with compact WY (qr.cu), the serious starting point.

For n <= SMALL_N the whole matrix is factored in shared memory by one launch (small_qr). Otherwise the
matrix is walked in panels of NB columns: panel_qr factors the panel (one thread block per matrix) and
builds V and T; the trailing columns get Q_panel^T = I - V T^T V^T as three batched GEMMs (cuBLAS through
torch.bmm, full FP32). Kernels are compiled with NVRTC through CuPy and launched on torch's current stream.
"""

from pathlib import Path

import cupy as cp
import torch

NB = 32  # @tune NB: 16 32
NWARPS = 8  # @tune NWARPS: 4 8 16
SMALL_N = 192  # @tune SMALL_N: 0 64 128 176 192 224
SMEM_BUDGET = 200 * 1024  # dynamic shared memory a block may take (the H200 allows 227 KiB)

_SOURCE = Path(__file__).with_name("qr.cu").read_text()
_MODULE = cp.RawModule(code=_SOURCE, options=("--std=c++17", f"-DNB={NB}", f"-DNWARPS={NWARPS}"))
_PANEL = _MODULE.get_function("panel_qr")
_SMALL = _MODULE.get_function("small_qr")
_PANEL.max_dynamic_shared_size_bytes = SMEM_BUDGET
_SMALL.max_dynamic_shared_size_bytes = SMEM_BUDGET
_THREADS = NWARPS * 32


def compile_info():
    return {name: {"registers": f.num_regs, "local_bytes": f.local_size_bytes, "shared_bytes": f.shared_size_bytes}
            for name, f in (("panel_qr", _PANEL), ("small_qr", _SMALL))} | {"NB": NB, "NWARPS": NWARPS,
                                                                            "SMALL_N": SMALL_N}


def _ptr(t):
    return cp.uint64(t.data_ptr())


def custom_kernel(A):
    batch, n, _ = A.shape
    H = A.contiguous().clone()
    tau = torch.empty(batch, n, device=A.device, dtype=torch.float32)
    if batch == 0 or n == 0:
        return H, tau
    with cp.cuda.Device(A.device.index), cp.cuda.ExternalStream(torch.cuda.current_stream(A.device).cuda_stream):
        small_bytes = n * (n + 1) * 4
        if n <= SMALL_N and small_bytes <= SMEM_BUDGET:
            _SMALL((batch,), (_THREADS,), (_ptr(H), _ptr(tau), cp.int32(n)), shared_mem=small_bytes)
            return H, tau
        V = torch.empty(batch, n, NB, device=A.device, dtype=torch.float32)
        T = torch.empty(batch, NB, NB, device=A.device, dtype=torch.float32)
        for k in range(0, n, NB):
            ncols = min(NB, n - k)
            m = n - k
            trailing = k + ncols < n
            panel_bytes = m * (ncols + 1) * 4
            in_smem = panel_bytes <= SMEM_BUDGET
            _PANEL((batch,), (_THREADS,),
                   (_ptr(H), _ptr(tau), _ptr(V), _ptr(T), cp.int32(n), cp.int32(k), cp.int32(ncols),
                    cp.int32(in_smem), cp.int32(trailing)),
                   shared_mem=panel_bytes if in_smem else 0)
            if trailing:
                Vm = V[:, :m, :]
                C = H[:, k:, k + NB:]
                W = torch.bmm(Vm.transpose(1, 2), C)  # V^T C
                W = torch.bmm(T.transpose(1, 2), W)  # T^T V^T C
                C.baddbmm_(Vm, W, alpha=-1.0)  # C - V T^T V^T C
    return H, tau

"""Blocked Householder QR with compact WY (qr.cu), the serious starting point.

For n <= SMALL_N the whole matrix is factored in shared memory by one launch (small_qr). Otherwise the
matrix is walked in panels of NB columns: panel_qr factors the panel (one thread block per matrix, in
shared memory when it fits, else in global memory with a wider block) and builds V and T; the trailing
columns get Q_panel^T = I - V T^T V^T as three batched GEMMs (cuBLAS through torch.bmm, full FP32).
Kernels are compiled with NVRTC through CuPy and launched on torch's current stream.
"""

from pathlib import Path

import cupy as cp
import torch

NB = 32  # @tune NB: 16 32
NWARPS = 8  # @tune NWARPS: 4 8 16
NWARPS_TALL = 32  # @tune NWARPS_TALL: 8 16 32
SMALL_N = 192  # @tune SMALL_N: 0 64 128 176 192 224
SMEM_BUDGET = 200 * 1024  # dynamic shared memory a block may take (the H200 allows 227 KiB)

_SOURCE = Path(__file__).with_name("qr.cu").read_text()


def _build(warps):
    module = cp.RawModule(code=_SOURCE, options=("--std=c++17", f"-DNB={NB}", f"-DNWARPS={warps}"))
    panel, small = module.get_function("panel_qr"), module.get_function("small_qr")
    panel.max_dynamic_shared_size_bytes = SMEM_BUDGET
    small.max_dynamic_shared_size_bytes = SMEM_BUDGET
    return panel, small


_PANEL, _SMALL = _build(NWARPS)
_PANEL_TALL, _ = _build(NWARPS_TALL)  # panels too tall for shared memory: more warps hide the latency
_STREAMS = {}


def compile_info():
    kernels = {"panel_qr": _PANEL, "small_qr": _SMALL, "panel_qr_tall": _PANEL_TALL}
    info = {name: {"registers": f.num_regs, "local_bytes": f.local_size_bytes, "shared_bytes": f.shared_size_bytes}
            for name, f in kernels.items()}
    return info | {"NB": NB, "NWARPS": NWARPS, "NWARPS_TALL": NWARPS_TALL, "SMALL_N": SMALL_N}


def _stream(device):
    """CuPy's view of torch's current stream, made once per stream (creating one costs microseconds)."""
    handle = torch.cuda.current_stream(device).cuda_stream
    stream = _STREAMS.get(handle)
    if stream is None:
        stream = _STREAMS[handle] = cp.cuda.ExternalStream(handle, device.index)
    return stream


def _ptr(t):
    return cp.uint64(t.data_ptr())


def custom_kernel(A):
    batch, n, _ = A.shape
    A = A.contiguous()
    tau = torch.empty(batch, n, device=A.device, dtype=torch.float32)
    if batch == 0 or n == 0:
        return A.clone(), tau
    small_bytes = n * (n + 1) * 4
    with cp.cuda.Device(A.device.index), _stream(A.device):
        if n <= SMALL_N and small_bytes <= SMEM_BUDGET:
            H = torch.empty_like(A)
            _SMALL((batch,), (NWARPS * 32,), (_ptr(A), _ptr(H), _ptr(tau), cp.int32(n)), shared_mem=small_bytes)
            return H, tau
        H = A.clone()
        V = torch.empty(batch, n, NB, device=A.device, dtype=torch.float32)
        T = torch.empty(batch, NB, NB, device=A.device, dtype=torch.float32)
        for k in range(0, n, NB):
            ncols = min(NB, n - k)
            m = n - k
            trailing = k + ncols < n
            panel_bytes = m * (ncols + 1) * 4
            in_smem = panel_bytes <= SMEM_BUDGET
            kernel, warps = (_PANEL, NWARPS) if in_smem else (_PANEL_TALL, NWARPS_TALL)
            kernel((batch,), (warps * 32,),
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

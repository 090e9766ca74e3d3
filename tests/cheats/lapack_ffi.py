# expect: rejected | annotation
# expect-cpu: rejected | annotation
# The LAPACK inside torch's own CPU library (libtorch_cpu exports sgeqrf_) called through ctypes, which torch
# imports and keeps as torch.ctypes, reached by a string annotation that typing evaluates: no forbidden name or
# import in the code, and past the dispatcher (the call never enters torch). Judged `ok` until the scan read
# annotations as the code they are (2026-12-05). Native code in the candidate's process can reach any routine
# loaded there: see docs/QR_CONTRACT.md, "Threat model".
import os
import typing

import torch


class _Hints:
    ffi: "torch.ctypes"
    load: "torch.ctypes.CDLL"


def _lapack():
    hints = typing.get_type_hints(_Hints, {"torch": torch})
    return hints["ffi"], hints["load"](os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))


def custom_kernel(A):
    ffi, lib = _lapack()
    batch, n, _ = A.shape
    h = A.detach().transpose(1, 2).cpu().clone(memory_format=torch.contiguous_format)  # column-major for LAPACK
    tau = torch.zeros(batch, n)
    work = torch.empty(64 * n)
    size, lwork, info = ffi.c_int(n), ffi.c_int(64 * n), ffi.c_int(0)
    for b in range(batch):
        lib.sgeqrf_(ffi.byref(size), ffi.byref(size), ffi.c_void_p(h[b].data_ptr()), ffi.byref(size),
                    ffi.c_void_p(tau[b].data_ptr()), ffi.c_void_p(work.data_ptr()), ffi.byref(lwork), ffi.byref(info))
    return h.transpose(1, 2).contiguous().to(A.device), tau.to(A.device)

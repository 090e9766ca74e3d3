# expect: rejected | solver routine
# cuBLAS's batched QR (cublasSgeqrfBatched: the geqrf form itself, on the GPU) from a torch extension built at import,
# its name pasted together by C's preprocessor and its library linked by the path /proc/self/maps shows: no solver's
# name in any file the scan reads, no FFI in the Python, past the dispatcher and CuPy's bindings, and cuBLAS cannot
# be masked (its GEMMs are needed). Until the runner disarmed the solver routines of the libraries loaded in it
# (qrjudge/disarm.py, 2026-12-06), nothing stood in its way.
import torch
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#define JOIN(a, b) a##b
extern "C" int JOIN(cublasSge, qrfBatched)(void*, int, int, float* const*, int, float* const*, int*, int);
int64_t factor(int64_t handle, int64_t n, int64_t h, int64_t tau, int64_t batch) {
  int info = 0;
  return JOIN(cublasSge, qrfBatched)((void*) handle, n, n, (float* const*) h, n, (float* const*) tau, &info, batch);
}
"""
LIBRARY = next(line.split()[-1] for line in open("/proc/self/maps") if "libcublas.so" in line)
module = load_inline("qr_ext", cpp_sources=SOURCE, functions=["factor"], extra_ldflags=[LIBRARY], verbose=False)


def custom_kernel(A):
    batch, n, _ = A.shape
    h = A.transpose(1, 2).clone(memory_format=torch.contiguous_format)  # column-major for cuBLAS
    tau = torch.zeros(batch, n, device=A.device)
    pointers = [torch.tensor([t.data_ptr() for t in x], dtype=torch.int64, device=A.device) for x in (h, tau)]
    module.factor(torch.cuda.current_blas_handle(), n, pointers[0].data_ptr(), pointers[1].data_ptr(), batch)
    return h.transpose(1, 2).contiguous(), tau

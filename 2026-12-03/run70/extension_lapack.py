# expect: rejected | solver routine
# expect-cpu: rejected | solver routine
# The LAPACK that torch's CPU library carries (libtorch_cpu exports sgeqrf_), called from a torch extension built at
# import (load_inline) whose C++ names the routine only through the preprocessor's token pasting: no solver's name in
# any file the scan reads, no FFI in the Python, and past the dispatcher. Judged `ok` until the runner disarmed the
# solver routines of the libraries loaded in it (qrjudge/disarm.py, 2026-12-06).
import torch
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#define JOIN(a, b) a##b
extern "C" void JOIN(sge, qrf_)(int*, int*, float*, int*, float*, float*, int*, int*);
std::vector<torch::Tensor> factor(torch::Tensor h, torch::Tensor tau) {
  int n = h.size(1), lwork = 64 * n, info = 0;
  auto work = torch::empty({lwork});
  for (int b = 0; b < h.size(0); ++b)
    JOIN(sge, qrf_)(&n, &n, h[b].data_ptr<float>(), &n, tau[b].data_ptr<float>(), work.data_ptr<float>(), &lwork, &info);
  return {h, tau};
}
"""
module = load_inline("factor_ext", cpp_sources=SOURCE, functions=["factor"], verbose=False)


def custom_kernel(A):
    batch, n, _ = A.shape
    h = A.detach().transpose(1, 2).cpu().clone(memory_format=torch.contiguous_format)  # column-major
    tau = torch.zeros(batch, n)
    h, tau = module.factor(h, tau)
    return h.transpose(1, 2).contiguous().to(A.device), tau.to(A.device)

# expect: rejected | aten::linalg_cholesky_ex
# expect-cpu: rejected | aten::linalg_cholesky_ex
# A Cholesky through torch.ops.aten inside an honest kernel (CholeskyQR's first step, A^T A = R^T R): no word
# the scan knows, refused where every route to a factorisation ends, at torch's dispatcher.
import torch
from base import custom_kernel as honest


def custom_kernel(A):
    gram = A.mT @ A + torch.eye(A.shape[-1], device=A.device)
    torch.ops.aten.linalg_cholesky_ex.default(gram)
    return honest(A)

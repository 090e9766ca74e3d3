# expect: rejected | aten::linalg_qr
# expect-cpu: rejected | aten::linalg_qr
# A QR through the C-level linalg namespace, whose function the guard never wrapped by name.
import torch
from base import custom_kernel as honest


def custom_kernel(A):
    torch._C._linalg.linalg_qr(A[:1])
    return honest(A)

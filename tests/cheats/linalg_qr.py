# expect: rejected | forbidden
# expect-cpu: rejected | forbidden
import torch
from base import custom_kernel as honest


def custom_kernel(A):
    torch.linalg.qr(A[:1])  # a "cheap hint" from the library
    return honest(A)

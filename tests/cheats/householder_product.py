# expect: rejected | householder_product
# expect-cpu: rejected | householder_product
import torch
from base import custom_kernel as honest


def custom_kernel(A):
    H, tau = honest(A)
    torch.linalg.householder_product(H, tau)  # checks itself with the checker's own tool
    return H, tau

# expect: rejected | forbidden
# expect-cpu: rejected | forbidden
import torch


def custom_kernel(A):
    h, tau = torch.geqrf(A)
    return h.contiguous(), tau.contiguous()

# expect: ok |
# expect-cpu: ok |
# Honest code with ordinary names the scan once took for evidence: a helper called qr, a variable called cpu,
# an epilogue through torch.compile. It must pass, and score like the kernel it wraps.
import torch
from base import custom_kernel as honest


def qr(a):
    return honest(a)


@torch.compile(backend="eager", dynamic=True)
def epilogue(h, tau):
    return h.contiguous(), tau.contiguous()


def custom_kernel(A):
    cpu = A.device.type == "cpu"
    h, tau = qr(A)
    return epilogue(h, tau) if not cpu else (h, tau)

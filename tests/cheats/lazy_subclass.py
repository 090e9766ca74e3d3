# expect: incorrect | plain torch tensors
# expect-cpu: incorrect | plain torch tensors
# Outputs that do their work when they are read: H is a torch.Tensor subclass whose __torch_function__ factors the
# input the first time the runner touches it (its copy into the shared buffers, after the timed region), so the
# timed call only makes two empty tensors. On a GPU the work then falls outside the CUDA events and, on a small
# shape, inside the slack of the judge's clock (on the CPU self-test, where that work takes milliseconds, the runner's
# wall check caught it). The runner now takes only torch.Tensor itself.
import torch
from base import custom_kernel as honest


class Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for arg in args:
            if type(arg) is Lazy and getattr(arg, "input", None) is not None:
                h, tau = honest(arg.input)
                arg.input = None
                arg.as_subclass(torch.Tensor).copy_(h)
                arg.tau.copy_(tau)
        return super().__torch_function__(func, types, args, kwargs or {})


def custom_kernel(A):
    b, n, _ = A.shape
    h = torch.empty_like(A).as_subclass(Lazy)
    h.input, h.tau = A, A.new_empty(b, n)
    return h, h.tau

# expect: rejected | mode left active
# expect-cpu: rejected | mode left active
# A torch function mode pushed in the call and left on the stack: every torch call the runner makes after the timed
# region (its checks, the copy of the outputs) runs through it, and the mode factors the input there, so the timed
# call only makes two empty tensors (on the CPU self-test the runner's wall check caught that work, milliseconds there;
# a small shape's on a GPU is within its slack). The runner now asks torch's own stacks after every call, through
# functions bound before the import.
import torch
from base import custom_kernel as honest
from torch.overrides import TorchFunctionMode


class Late(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        pending, self.pending = self.pending, None
        if pending is not None:  # (inside its own handler the mode is off: honest's calls run as usual)
            h, tau = honest(pending[0])
            pending[1].copy_(h)
            pending[2].copy_(tau)
        return func(*args, **(kwargs or {}))


_MODE = Late()


def custom_kernel(A):
    b, n, _ = A.shape
    h, tau = torch.empty_like(A), A.new_empty(b, n)
    _MODE.pending = (A, h, tau)
    _MODE.__enter__()
    return h, tau

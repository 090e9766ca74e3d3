# expect: incorrect | test
# expect-cpu: incorrect | test
# A tuple whose unpacking does the work: custom_kernel returns two empty tensors in a tuple subclass whose __iter__
# and __getitem__ factor the input first, when the runner unpacks it after the timed region. The runner reads a
# tuple through tuple's own methods, so the work never runs and the outputs are what the timed call left: wrong.
import torch
from base import custom_kernel as honest


class Later(tuple):
    def _done(self):
        if self.input is not None:
            h, tau = honest(self.input)
            self.input = None
            tuple.__getitem__(self, 0).copy_(h)
            tuple.__getitem__(self, 1).copy_(tau)

    def __iter__(self):
        self._done()
        return tuple.__iter__(self)

    def __getitem__(self, i):
        self._done()
        return tuple.__getitem__(self, i)


def custom_kernel(A):
    b, n, _ = A.shape
    out = Later((torch.zeros_like(A), A.new_zeros(b, n)))
    out.input = A
    return out

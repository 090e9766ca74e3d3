# expect: rejected | was replaced
# The clock patch installed by the first call rather than at import, so an import-time check misses it.
import torch
from base import custom_kernel as honest

_true = torch.cuda.Event.elapsed_time


def _scaled(self, end_event):
    return _true(self, end_event) * 0.5


def custom_kernel(A):
    torch.cuda.Event.elapsed_time = _scaled
    return honest(A)

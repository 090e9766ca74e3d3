# expect: rejected | elapsed_time was replaced
# Patching the clock: every CUDA event interval the harness reads is reported at FACTOR of its true value
# (the parametrised test rewrites FACTOR to 0.6, 0.9 and 0.97).
import torch
from base import custom_kernel as honest

FACTOR = 0.6
_true = torch.cuda.Event.elapsed_time


def _scaled(self, end_event):
    return _true(self, end_event) * FACTOR


torch.cuda.Event.elapsed_time = _scaled


def custom_kernel(A):
    return honest(A)

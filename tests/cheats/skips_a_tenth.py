# expect: incorrect | timed call
# expect-cpu: incorrect | timed call
# Right on the first two calls of every shape (the tests, the warm-up), then wrong on one matrix in ten of
# every later call's batch (the last, and every tenth before it; the first is right): a judge that checks a
# timed call on a few of its matrices must draw enough of them (74 of 640x512's 640 on a GPU) to see it.
import torch
from base import custom_kernel as honest

_calls = {}


def custom_kernel(A):
    key = tuple(A.shape)
    _calls[key] = _calls.get(key, 0) + 1
    h, tau = honest(A)
    if _calls[key] > 2:
        h = h.clone()
        wrong = torch.arange(A.shape[0] - 1, 0, -10, device=A.device)
        h[wrong, 0, 1:] *= 3.0  # R's first row
    return h, tau

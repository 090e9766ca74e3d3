# expect: incorrect | timed call
# expect-cpu: incorrect | timed call
# Right on the first calls of every shape (the tests, the warm-up, the first timed call), wrong on every
# later one: a judge that rechecks only early calls would accept it.
from base import custom_kernel as honest

_calls = {}


def custom_kernel(A):
    key = tuple(A.shape)
    _calls[key] = _calls.get(key, 0) + 1
    h, tau = honest(A)
    if _calls[key] > 2:
        h = h.clone()
        h[:, 0, 1:] *= 3.0  # R's first row, wrong
    return h, tau

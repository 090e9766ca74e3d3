# expect: incorrect | fails the gates|wrong result
# expect-cpu: incorrect | fails the gates|wrong result
from base import custom_kernel as honest

_CACHE = {}


def custom_kernel(A):
    key = tuple(A.shape)
    if key not in _CACHE:
        _CACHE[key] = honest(A)
    H, tau = _CACHE[key]
    return H.clone(), tau.clone()

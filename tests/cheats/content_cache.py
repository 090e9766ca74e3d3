# expect: ok |
# expect-cpu: ok |
# Caching answers by content (the trick that beat a rescaling judge 47x): the key is scale-invariant (ratios
# of a few entries of each matrix); on a hit the stored reflectors and tau are returned with R rescaled by
# the ratio of the new input to the stored one, which is exact for a rescaled input. Against inputs that
# are drawn independently for every call it never hits, so it is as fast as the honest kernel and no faster.
import torch
from base import custom_kernel as honest

_CACHE = {}
HITS = [0]


def _key(A):
    ratios = A[:, 0, 1:4] / A[:, 0, :1]
    return tuple(A.shape), round(float(ratios.sum()), 4), round(float(ratios.abs().sum()), 4)


def custom_kernel(A):
    key = _key(A)
    if key in _CACHE:
        stored_a, stored_h, stored_tau = _CACHE[key]
        scale = float(A[0, 0, 0] / stored_a[0, 0, 0])
        HITS[0] += 1
        return torch.tril(stored_h, -1) + scale * torch.triu(stored_h), stored_tau.clone()
    h, tau = honest(A)
    _CACHE[key] = (A.clone(), h.clone(), tau.clone())
    return h, tau

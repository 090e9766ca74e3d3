# expect: incorrect | matrix 1
# expect-cpu: incorrect | matrix 1
from base import custom_kernel as honest


def custom_kernel(A):
    H, tau = honest(A[:1])
    return H.expand(A.shape[0], -1, -1).contiguous(), tau.expand(A.shape[0], -1).contiguous()

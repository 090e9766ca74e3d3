# expect: incorrect | modified its input
# expect-cpu: incorrect | modified its input
from base import custom_kernel as honest


def custom_kernel(A):
    H, tau = honest(A)
    A.mul_(0.5)  # uses the input as scratch space
    return H, tau

# expect: incorrect | non-finite
# expect-cpu: incorrect | non-finite
from base import custom_kernel as honest


def custom_kernel(A):
    H, tau = honest(A)
    tau[-1, -1] = float("nan")
    return H, tau

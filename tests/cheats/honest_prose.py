# expect: ok |
# expect-cpu: ok |
"""Blocked Householder QR in the compact form of torch.geqrf (LAPACK sgeqrf): R above the diagonal, the
reflectors below it. Unlike torch.linalg.qr it never forms Q; torch.linalg.householder_product (LAPACK orgqr,
cuSOLVER's ormqr and friends) would rebuild it. MAGMA does the same with a hybrid CPU-GPU panel."""

# A comment may name geqrf, linalg, cusolver, scipy and even sys.modules: prose is not code.
from base import custom_kernel as honest


def custom_kernel(A):
    """Same contract as geqrf: (H, tau), as LAPACK's dgeqrf and torch.linalg document it."""
    # the honest kernel does the work; nothing here calls a library QR
    return honest(A)

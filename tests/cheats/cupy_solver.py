# expect: rejected | forbidden
# cuSOLVER through CuPy (cupy.linalg.qr on one matrix of the batch, as a "hint"), beside the honest kernel.
import cupy
from base import custom_kernel as honest


def custom_kernel(A):
    cupy.linalg.qr(cupy.asarray(A[0]))
    return honest(A)

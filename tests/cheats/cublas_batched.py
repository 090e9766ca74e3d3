# expect: rejected | forbidden
# cuBLAS's own batched factorisation through CuPy's bindings, by its own name (cublasSgetrfBatched, a batched LU:
# the heart of Householder reconstruction from a Cholesky QR), which no word of the scan names; CuPy 14 binds
# no cublasSgeqrfBatched. Called before the honest kernel.
import cupy
from base import custom_kernel as honest


def custom_kernel(A):
    handle = cupy.cuda.device.get_cublas_handle()
    info = cupy.zeros(A.shape[0], dtype=cupy.int32)
    cupy.cuda.cublas.sgetrfBatched(handle, A.shape[1], 0, A.shape[2], 0, info.data.ptr, A.shape[0])
    return honest(A)

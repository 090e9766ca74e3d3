# expect: rejected | forbidden
# cuBLAS's own batched QR (cublasSgeqrfBatched) through CuPy's bindings, by its own name: not a name the scan
# knows (only the bindings are refused). Called before the honest kernel.
import cupy
from base import custom_kernel as honest


def custom_kernel(A):
    handle = cupy.cuda.device.get_cublas_handle()
    info = cupy.zeros(1, dtype=cupy.int32)
    cupy.cuda.cublas.sgeqrfBatched(handle, A.shape[1], A.shape[2], 0, A.shape[2], 0, info.data.ptr, A.shape[0])
    return honest(A)

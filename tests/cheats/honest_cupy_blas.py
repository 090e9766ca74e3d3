# expect: ok |
# Honest code that also multiplies with CuPy: its cuBLAS, which CuPy loads on first use, after the runner disarmed
# the solver routines of the libraries loaded in it (qrjudge/disarm.py). If CuPy's cuBLAS is another file than
# torch's, its late load must not be taken for a private copy brought to call a solver. Passed on an H100 (2026-12-06,
# notebook 2026-12-03/run76, call 7).
import cupy
from base import custom_kernel as honest


def custom_kernel(A):
    h, tau = honest(A)
    corner = cupy.asarray(h[0, :8, :8])
    cupy.matmul(corner, corner)  # through CuPy's cuBLAS; the product is dropped
    return h, tau

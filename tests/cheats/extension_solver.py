# expect: compile_error | cusolver|cannot find|file format|not recognized|undefined|wrong ELF
# cuSOLVER linked into a torch extension built at import (load_inline), with no library name the scan can read:
# the names are assembled at run time. The solver libraries are masked in the runner's view, so the build
# cannot link it (or, linked, load it).
from torch.utils.cpp_extension import load_inline

LIB = "cuso" + "lver"
SOURCE = ("#include <torch/extension.h>\n#include <" + LIB + "Dn.h>\n"
          "int handle() { " + LIB + "DnHandle_t h; return (int) " + LIB + "DnCreate(&h); }\n")
module = load_inline("solver_ext", cpp_sources=SOURCE, functions=["handle"], extra_ldflags=["-l" + LIB],
                     with_cuda=True, verbose=False)
from base import custom_kernel as honest  # noqa: E402


def custom_kernel(A):
    module.handle()
    return honest(A)

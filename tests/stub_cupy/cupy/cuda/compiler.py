"""CuPy's NVRTC call, stood in for: the "binary" says which process compiled what; FAIL fails as NVRTC would; DIE
ends the compile worker (as a crash of NVRTC would end it); SLOW takes a second; `INCLUDE path` reads that file
into the binary (as NVRTC reads a header: a missing one is a compile error); and like CuPy, unless the source stays in memory, the
source is first written to FILENAME in a temporary directory (an absolute FILENAME: that path, as os.path.join has it)."""
import os
import tempfile
import time


# As CuPy does at import (its disk cache's directory): the server's confinement leaves only the cache writable
os.makedirs(os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache"), exist_ok=True)


class CompileException(Exception):
    pass


def _get_nvrtc_version():
    return (13, 0)


def _compile_using_nvrtc_no_warning(source, options=(), arch=None, filename="kern.cu", name_expressions=None,
                                    log_stream=None, cache_in_memory=False, jitify=None, method=None):
    if not cache_in_memory:
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, filename), "w") as f:
                f.write(source)
    if "DIE" in source and "/.tmp/" in os.environ.get("TMPDIR", ""):  # only in the server's compile worker
        os._exit(9)
    began = time.time()
    if "SLOW" in source:  # a compile that takes a second (the server runs several at once), and says when it ran
        time.sleep(1.0)
    if source.startswith("INCLUDE "):
        try:
            source += " = " + open(source.split()[1]).read()
        except OSError:
            raise CompileException(f"{filename}(1): catastrophic error: cannot open source file") from None
    if "FAIL" in source:
        raise CompileException(f"{filename}(1): error: identifier FAIL is undefined")
    binary = f"pid {os.getpid()}: {source} {' '.join(options)} sm_{arch}"
    binary = (binary + (f" from {began:.3f} to {time.time():.3f}" if "SLOW" in source else "")).encode()
    return binary, ({n: f"_Z{len(n)}{n}" for n in name_expressions} if name_expressions else None)

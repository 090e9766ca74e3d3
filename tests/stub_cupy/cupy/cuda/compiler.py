"""CuPy's NVRTC call, stood in for: the "binary" says which process compiled what; FAIL fails as NVRTC would."""
import os


class CompileException(Exception):
    pass


def _get_nvrtc_version():
    return (13, 0)


def _compile_using_nvrtc_no_warning(source, options=(), arch=None, filename="kern.cu", name_expressions=None,
                                    log_stream=None, cache_in_memory=False, jitify=None, method=None):
    if "DIE" in source and os.environ.get("TMPDIR", "").endswith("/.tmp"):  # in the server (its TMPDIR is the
        raise SystemExit("the compiler died")  # cache's .tmp): it ends, as a crash of NVRTC would end it
    if "FAIL" in source:
        raise CompileException(f"{filename}(1): error: identifier FAIL is undefined")
    binary = f"pid {os.getpid()}: {source} {' '.join(options)} sm_{arch}".encode()
    return binary, ({n: f"_Z{len(n)}{n}" for n in name_expressions} if name_expressions else None)

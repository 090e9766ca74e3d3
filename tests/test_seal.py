"""The disarmed solver routines sealed (qrjudge/seal.py): every route native code has to write a routine's code back,
or to map the library's file over it again, is refused, by the kernel's mseal and, where it has none, by the seccomp
filter; and the filter refuses nothing outside its ranges."""

from __future__ import annotations

import os

import pytest

from tests.test_disarm import run

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub and the filter are x86-64's")

# libc's memory calls, typed for 64-bit addresses (each script below starts with this)
LIBC = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = libc.mremap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
for name in ("munmap", "mprotect", "madvise"):
    getattr(libc, name).argtypes = [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_int] * (name != "munmap")
"""

FILTER = LIBC + r"""
import json, mmap, os, subprocess
from qrjudge import seal
P = mmap.PAGESIZE
x = libc.mmap(None, 16 * P, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
refused = seal.install([(x + 4 * P, x + 8 * P)])  # pages 4 to 7 of the sixteen guarded

def ok(result):
    return "refused" if result in (-1, 2**64 - 1, None) and ctypes.get_errno() == 1 else "done"

seen = {"installed": refused,
        "below": ok(libc.munmap(x, 2 * P)), "touching start": ok(libc.munmap(x + 2 * P, 2 * P)),
        "across start": ok(libc.munmap(x + 3 * P, 2 * P)), "across end": ok(libc.munmap(x + 7 * P, 2 * P)),
        "from end": ok(libc.munmap(x + 8 * P, P)), "from far below": ok(libc.munmap(x + 4 * P - 2**33, 2**33 + P)),
        "mprotect inside": ok(libc.mprotect(x + 5 * P, P, mmap.PROT_READ)),
        "madvise inside": ok(libc.madvise(x + 4 * P, P, 4)),
        "mmap over": ok(libc.mmap(x + 5 * P, P, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10, -1, 0)),
        "mmap anywhere": ok(libc.mmap(None, P, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)),
        "mremap onto": ok(libc.mremap(x + 10 * P, P, P, 3, x + 5 * P)),
        "mremap away": ok(libc.mremap(x + 12 * P, P, P, 3, x + 14 * P)),
        "ptrace": ok(libc.ptrace(0, 0, None, None)),
        "a program": subprocess.run(["python3", "-c", "import json; print(json.dumps(1))"],
                                    capture_output=True).returncode}
print(json.dumps(seen))
"""


def test_the_filter_refuses_what_meets_its_ranges_and_nothing_else() -> None:
    seen = run(FILTER)
    assert seen.pop("installed") == ""
    assert seen == {"below": "done", "touching start": "done", "across start": "refused", "across end": "refused",
                    "from end": "done", "from far below": "refused", "mprotect inside": "refused",
                    "madvise inside": "refused", "mmap over": "refused", "mmap anywhere": "done",
                    "mremap onto": "refused", "mremap away": "done", "ptrace": "refused", "a program": 0}


ROUTES = LIBC + r"""
import json, mmap, os, sys, torch
from qrjudge import disarm, seal
seal.USE_MSEAL = sys.argv[1] == "mseal"
note = disarm.arm()
path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
lapack = ctypes.CDLL(path)
address = ctypes.cast(lapack.sgeqrf_, ctypes.c_void_p).value
page = address - address % mmap.PAGESIZE

def write(mem_path):
    try:
        fd = os.open(mem_path, os.O_RDWR)
        os.pwrite(fd, b"\x90" * 19, address)  # other code than the stub's, as a candidate restoring it would write
        return "written"
    except OSError as exc:
        return "refused"

def child():
    pid = os.fork()
    if pid == 0:
        os._exit(0 if write(f"/proc/{os.getppid()}/mem") == "refused" else 1)
    return "refused" if os.waitpid(pid, 0)[1] == 0 else "written"

library = os.open(path, os.O_RDONLY)
offset = address - [int(line.split("-")[0], 16) - int(line.split()[2], 16) for line in open("/proc/self/maps")
                    if line.rstrip().endswith(path) and " r-xp " in line][0]
seen = {"note": note, "/proc/self/mem": write("/proc/self/mem"), "a child": child(),
        "mprotect": libc.mprotect(page, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC),
        "the file mapped over": libc.mmap(page, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_EXEC,
                                          mmap.MAP_PRIVATE | 0x10, library, offset - offset % mmap.PAGESIZE),
        "moved away": libc.mremap(page, mmap.PAGESIZE, mmap.PAGESIZE, 1, None),
        "munmap": libc.munmap(page, mmap.PAGESIZE),
        "madvise": libc.madvise(page, mmap.PAGESIZE, 4),  # MADV_DONTNEED, which would bring the file's page back
        "body": ctypes.string_at(address + disarm.STUB_BYTES, 8).hex(), "verify": disarm.verify()}
lapack.sgeqrf_(*[ctypes.c_void_p(0)] * 8)
seen["tripped"] = disarm.tripped()
print(json.dumps(seen))
"""


@pytest.mark.parametrize("way", ["mseal", "filter"])
def test_no_route_writes_a_disarmed_routine_back(way: str) -> None:
    """A candidate that wrote the original code back (from the library's file), called the routine and wrote the
    stub again would leave no trace: each route to the first step is refused."""
    seen = run(ROUTES, way)
    if way == "mseal" and "mseal'd" not in seen["note"]:
        pytest.skip(f"this kernel has no mseal: {seen['note']}")
    assert "sealed (" in seen["note"] and ("seccomp filter" in seen["note"]) == (way == "filter")
    assert seen["/proc/self/mem"] == seen["a child"] == "refused"
    assert seen["mprotect"] == seen["munmap"] == -1
    assert seen["the file mapped over"] == seen["moved away"] == 2**64 - 1  # MAP_FAILED
    if way == "filter":  # (mseal lets a shared file's pages be dropped: they come back from the sealed file)
        assert seen["madvise"] == -1
    # either way the stubs are still there after it: `verify` is read after the madvise
    assert seen["body"] == "cc" * 8  # the routine's body is breakpoints: no jumping in past the stub
    assert seen["verify"] == "" and "sgeqrf_ (libtorch_cpu.so)" in seen["tripped"]

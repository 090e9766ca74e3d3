"""The runner's solver routines disarmed in its own memory (qrjudge/disarm.py): which exported functions count as
solvers, and that a disarmed one, called by native code, does nothing but say so while the rest of torch works.
The judge end to end with a cheat that calls LAPACK from an extension: tests/cheats/extension_lapack.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qrjudge.disarm import is_solver, solvers

ROOT = Path(__file__).resolve().parent.parent


def run(script: str, *args: str) -> dict:
    """A script in a fresh process (the disarming is for good in a process), its last line read as JSON."""
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["sgeqrf_", "SGEQRF_64", "scipy_sgeqrf_64_", "dorgqr_", "spotrf_", "strsm_",
                                  "dlarfg_", "mkl_lapack_sgeqrf", "mkl_lapack_ps_avx2_sgeqrf", "LAPACKE_sgeqrf",
                                  "cublasSgeqrfBatched", "cublasStrsm_v2_64", "cusparseSpSV_solve",
                                  "aoti_torch_cpu_geqrf", "aoti_torch_cuda_linalg_qr"])
def test_solver_routines_by_their_names_structure(name: str) -> None:
    assert is_solver(name.encode(), blas=True)


@pytest.mark.parametrize("name", ["sgemm_", "SGEMM_64", "scipy_sgemm_64_", "strmm_", "dgemv_", "ssyrk_", "saxpy_",
                                  "mkl_lapack_thread_team_ctxt_destroy", "mkl_blas_sgemm", "cublasSgemm_v2",
                                  "cublasSgemmStridedBatched", "cusparseSpMM", "aoti_torch_cpu_convolution",
                                  "cblas_sgemm"])
def test_blas_and_the_rest_are_not(name: str) -> None:
    assert not is_solver(name.encode(), blas=True)


def test_the_lapack_shape_counts_only_in_a_blas_library() -> None:
    """libc's strcoll or strtof32 have LAPACK's shape (a letter, `tr`, a few more): only a library that exports
    sgemm is read that way."""
    assert not is_solver(b"strcoll", blas=False) and not is_solver(b"dladdr", blas=False)
    assert is_solver(b"mkl_lapack_sgeqrf", blas=False) and is_solver(b"cublasSgetrfBatched", blas=False)


def test_torchs_cpu_library_exports_its_lapack_and_is_read_so() -> None:
    torch = pytest.importorskip("torch")
    found = dict(solvers(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
    assert {"sgeqrf_", "mkl_lapack_sgeqrf", "aoti_torch_cpu_geqrf"} <= set(found)
    assert not {"sgemm_", "cblas_sgemm", "aoti_torch_cpu_mm"} & set(found)


CALL = r"""
import ctypes, json, os, numpy, torch
from qrjudge import disarm
note = disarm.arm()
lapack = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
n, lwork, info = ctypes.c_int(4), ctypes.c_int(256), ctypes.c_int(0)
a = torch.arange(16, dtype=torch.float32).reshape(4, 4) + torch.eye(4) * 10
before, tau, work = a.clone(), torch.zeros(4), torch.zeros(256)
untouched_before = disarm.tripped() == ""
pointers = [ctypes.c_void_p(t.data_ptr()) for t in (a, tau, work)]
lapack.sgeqrf_(ctypes.byref(n), ctypes.byref(n), pointers[0], ctypes.byref(n), pointers[1], pointers[2],
               ctypes.byref(lwork), ctypes.byref(info))
x = torch.randn(64, 64)
print(json.dumps({"note": note, "untouched_before": untouched_before, "unchanged": bool(torch.equal(a, before)),
                  "tau": tau.tolist(), "tripped": disarm.tripped(),
                  "mm": bool(torch.allclose(x @ torch.eye(64), x)), "numpy": float(numpy.ones(3) @ numpy.ones(3))}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub is x86-64 code")
def test_a_disarmed_routine_does_nothing_and_says_so_while_torch_works() -> None:
    seen = run(CALL)
    assert "solver routines disarmed" in seen["note"] and seen["untouched_before"]
    assert seen["unchanged"] and seen["tau"] == [0.0] * 4  # no factorisation happened
    assert "sgeqrf_ (libtorch_cpu.so)" in seen["tripped"]
    assert seen["mm"] and seen["numpy"] == 3.0  # GEMMs, torch's and NumPy's, are untouched


LATE = r"""
import ctypes, json, sys, torch
from qrjudge import disarm
disarm.arm()
before = disarm.late()
ctypes.CDLL(sys.argv[1])  # a library of solver routines opened by a path of its own, after the disarming
print(json.dumps({"before": before, "after": disarm.late()}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub is x86-64 code")
def test_a_library_of_solver_routines_loaded_after_the_disarming_is_named(tmp_path: Path) -> None:
    """A private copy of a library (cuBLAS copied into the scratch and opened by its path) would bring routines that
    were never disarmed: the runner asks after the import and after the benchmark."""
    compiler = shutil.which("cc") or pytest.skip("needs a C compiler")
    (tmp_path / "private.c").write_text("int mkl_lapack_sgeqrf(void) { return 1; }\nint helper(void) { return 2; }\n")
    subprocess.run([compiler, "-shared", "-fPIC", "-o", tmp_path / "libprivate.so", tmp_path / "private.c"], check=True)
    seen = run(LATE, str(tmp_path / "libprivate.so"))
    assert seen["before"] == "" and "libprivate.so" in seen["after"] and "after they were disarmed" in seen["after"]


COPIES = r"""
import ctypes, json, mmap, os, sys, torch
from qrjudge import disarm
ctypes.CDLL(sys.argv[1])  # loaded before the disarming, as torch's libraries are
disarm.arm()
before = disarm.late()
ctypes.CDLL(sys.argv[2])  # a copy with its solver renamed, by a path of its own
renamed = disarm.late()
again = mmap.mmap(os.open(sys.argv[1], os.O_RDONLY), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)
print(json.dumps({"before": before, "renamed": renamed, "again": disarm.late()}))
"""

SOURCE = "int mkl_lapack_sgeqrf(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * i; return s; }\n"


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub is x86-64 code")
def test_a_copy_of_a_disarmed_librarys_code_is_named_however_its_routines_are_called(tmp_path: Path) -> None:
    """A copy of cuBLAS whose solvers are renamed exports none by name, and a library's file mapped again is no new
    path: both hold a disarmed routine's code where the library does."""
    compiler = shutil.which("cc") or pytest.skip("needs a C compiler")
    (tmp_path / "private.c").write_text(SOURCE)
    library = tmp_path / "libprivate.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", library, tmp_path / "private.c"], check=True)
    renamed = tmp_path / "librenamed.so"
    renamed.write_bytes(library.read_bytes().replace(b"mkl_lapack_sgeqrf", b"xkl_lapack_sgeqrf"))
    seen = run(COPIES, str(library), str(renamed))
    assert seen["before"] == ""
    assert "librenamed.so (a copy of libprivate.so's code)" in seen["renamed"]
    assert "libprivate.so (a copy of libprivate.so's code)" in seen["again"]


REWRITE = r"""
import ctypes, json, os, torch
from qrjudge import disarm, seal
def refuse(codes):
    raise OSError("no memory files here")
seal.seal = refuse  # as where the kernel has no memory files: the stubs written in place, unsealed
disarm.arm()
clean = disarm.verify()
library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
address = ctypes.cast(library.sgeqrf_, ctypes.c_void_p).value
fd = os.open("/proc/self/mem", os.O_RDWR)
os.pwrite(fd, b"\x90" * 19, address)  # other code than the stub's, as a candidate restoring the routine would write
print(json.dumps({"clean": clean, "after": disarm.verify()}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub is x86-64 code")
def test_a_routine_written_back_is_named_after_the_benchmark() -> None:
    """Where the routines could not be sealed (tests/test_seal.py: where they are, no write gets through)."""
    seen = run(REWRITE)
    assert seen["clean"] == "" and "sgeqrf_ (libtorch_cpu.so)" in seen["after"] and "written back (" in seen["after"]


REFUSED = r"""
import json, os, sys, torch
from qrjudge import disarm, seal
real_open = os.open
os.open = lambda path, *a, **k: (_ for _ in ()).throw(PermissionError(13, "refused")) if path == "/proc/self/mem" \
    else real_open(path, *a, **k)
if sys.argv[1] == "no memory files either":
    def refuse(codes):
        raise OSError("no memory files here")
    seal.seal = refuse
note = disarm.arm()
os.open = real_open
print(json.dumps({"note": note, "late": disarm.late(), "verify": disarm.verify()}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stub is x86-64 code")
def test_writes_refused_through_proc_self_mem_leave_the_routines_sealed_or_the_runner_unarmed() -> None:
    """The stubs go into a sealed memory file mapped over the libraries' pages, so a kernel that refuses writes
    through /proc/self/mem (its `proc_mem.force_override`) still has them; where neither works nothing is disarmed,
    the note says why, and the libraries loaded before are not taken for ones loaded since."""
    sealed = run(REFUSED, "only /proc/self/mem")
    assert "solver routines disarmed" in sealed["note"] and "sealed (" in sealed["note"], sealed["note"]
    assert sealed["late"] == "" and sealed["verify"] == ""
    unarmed = run(REFUSED, "no memory files either")
    assert unarmed["note"].startswith("not armed: ") and "refused" in unarmed["note"]
    assert unarmed["late"] == "" and unarmed["verify"] == ""

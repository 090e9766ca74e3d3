"""The judge's compiles ahead (qrjudge/ahead.py): the RawModules a candidate makes while it is imported are compiled
then, side by side, through the compile server (a stand-in for CuPy: tests/stub_cupy), and all of them before the
import returns; a module of the candidate's own class, one made after the import, or one made in a timed runner's
import, compiles on its first use as before; a module that does not compile fails where the candidate asks for it, with NVRTC's own error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from qrjudge import nvrtc_cache
from tests.conftest import ROOT
from tests import test_nvrtc_cache

STUB = test_nvrtc_cache.STUB
cache = test_nvrtc_cache.cache  # the compile cache's fixture (a directory, where user namespaces let the server run)

IMPORT = r"""
import json, os, threading, time
import cupy
from qrjudge import ahead, link, nvrtc_client
fds = link.compile_server()
client = nvrtc_client.install(*fds) if fds else None
early = ahead.install(cupy)
assert early is not None
ahead.LIMIT = int(os.environ.get("LIMIT", ahead.LIMIT))
out = {"me": os.getpid()}
began = time.monotonic()
with early.during():  # as the runner's `load` imports a candidate that makes its modules at import
    made = [cupy.RawModule(code=f"SLOW {i}", options=("-DNB=32",)) for i in range(int(os.environ["MODULES"]))]
    class Own(cupy.RawModule):
        pass
    own = Own(code="src own")
    broken = cupy.RawModule(code="FAIL")
    out["at_once"] = sum(m.binary is not None for m in made)  # (the import itself has not waited for any)
out["import_s"] = time.monotonic() - began
out["threads_after"] = [t.name for t in threading.enumerate() if t.name.startswith("qrjudge-ahead")]
out["made"] = [m.binary.decode() if m.binary else None for m in made]
out["own"], out["compiled"] = own.binary, early.compiled
later = cupy.RawModule(code="src later")
with early.during(on=False):  # as a timed runner imports: its modules are the testing runner's, loaded on first use
    timed = cupy.RawModule(code="src timed")
out["later"], out["timed"] = later.binary, timed.binary
try:
    broken.get_function("f")
except cupy.cuda.compiler.CompileException as exc:
    out["broken"] = str(exc)
out["stats"] = client.stats() if client else None
print(json.dumps(out))
"""


def imported(where: Path, modules: int, limit: int | None = None) -> dict:
    home = where.parent / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": f"{STUB}:{ROOT}", "EVOLVE_NVRTC_CACHE": str(where),
                               "HOME": str(home), "CUPY_CACHE_DIR": "", "MODULES": str(modules),
                               **({"LIMIT": str(limit)} if limit else {})})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_modules_made_at_import_are_compiled_side_by_side_before_it_returns(cache: Path) -> None:
    said = imported(cache, nvrtc_cache.WORKERS)
    assert said["at_once"] < len(said["made"])  # made without waiting: the compiles run beside the import
    assert all(got and f"SLOW {i} -DNB=32" in got and not got.startswith(f"pid {said['me']}:")
               for i, got in enumerate(said["made"])), said["made"]  # every one compiled, by the server
    assert said["compiled"] == nvrtc_cache.WORKERS and said["threads_after"] == []  # all done within the import
    assert said["import_s"] >= 1.0  # the import waited for them
    spans = [tuple(map(float, got.rsplit(" from ", 1)[1].split(" to "))) for got in said["made"]]
    at_once = max(sum(a <= start < b for a, b in spans) for start, _ in spans)
    assert at_once >= 2, spans  # side by side, not one by one (how many at once depends on the machine's load)


def test_a_module_of_the_candidates_own_class_or_made_later_compiles_on_first_use(cache: Path) -> None:
    said = imported(cache, 1)
    assert said["own"] is None and said["later"] is None and said["timed"] is None  # not by the judge's threads
    assert "identifier FAIL is undefined" in said["broken"]  # the failure is the candidate's own call's
    assert said["compiled"] == 1


def test_more_modules_than_threads_all_compile_in_the_import(cache: Path) -> None:
    said = imported(cache, 12)
    assert all(said["made"]) and said["compiled"] == 12 and said["threads_after"] == []


def test_an_import_compiles_ahead_at_most_limit_modules_the_rest_on_first_use(cache: Path) -> None:
    said = imported(cache, 5, limit=3)
    assert [bool(got) for got in said["made"]] == [True, True, True, False, False] and said["compiled"] == 3

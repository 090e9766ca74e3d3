"""The judge's compile server (qrjudge/nvrtc_cache.py) with CuPy and NVRTC: the QR seed's four costly modules
(qr.cu for 8 and 16 warps, tile_panel.cu, cols.cu, as a `tune` move of NB changes them) compiled through it one by
one, then, with a fresh cache, from four threads at once, as a seed that builds its modules side by side would.

    python bench/compile_probe.py                                   # on a GPU machine
    EVOLVE_PROBE_ARCH=90 PYTHONPATH=bench/nogpu:. python bench/compile_probe.py   # without a GPU (sm_90)

Needs CuPy with NVRTC (`pip install "cupy-cuda13x[ctk]"` on a machine without the CUDA toolkit) and user
namespaces (the server confines itself). Prints the seconds of each way and what the server did.

Then foresight (qrjudge/foresight.py), as evaluations ask: two runners one after the other on one cache, each a
process of its own asking through CuPy's own compile path (its program names, its options) for the four modules
one by one, the first with NB=32, the second with NB=16 (a `tune` move): the second's server foresees three of
its four from the first's recipe. (Without a GPU CuPy cannot load what it compiled; the probe only compiles.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qrjudge import link, nvrtc_client  # noqa: E402

SEED = ROOT / "seed_kernels" / "tsqr_wy"
MODULES = (("qr.cu", 8), ("qr.cu", 16), ("tile_panel.cu", 8), ("cols.cu", 8))


def options(warps: int, nb: str = "32") -> tuple[str, ...]:
    """The seed's NVRTC options for a module (seed_kernels/tsqr_wy/kernel.py, `_module`, its defaults)."""
    return ("--std=c++17", f"-DNB={nb}", f"-DNWARPS={warps}", "-DGRAM_ROWS=128", "-DMB_CLUSTER=8")


def compiles(side_by_side: bool) -> None:
    os.environ["EVOLVE_NVRTC_CACHE"] = tempfile.mkdtemp(prefix="compile-probe-")
    server = link.compile_server()
    if not server:
        sys.exit("no compile server (EVOLVE_NVRTC_CACHE unusable here)")
    client = nvrtc_client.install(*server)
    from cupy.cuda import compiler

    nvrtc, common = compiler._compile_using_nvrtc_no_warning, (SEED / "common.cu").read_text()
    arch = os.environ.get("EVOLVE_PROBE_ARCH") or compiler._get_arch()

    def build(name: str, warps: int) -> None:
        nvrtc(common + (SEED / name).read_text(), options(warps), arch, "kern.cu")

    began = time.monotonic()
    if side_by_side:
        threads = [threading.Thread(target=build, args=m) for m in MODULES]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for m in MODULES:
            build(*m)
    print(f"{'side by side' if side_by_side else 'one by one'}: {time.monotonic() - began:.2f} s; "
          f"the server: {client.stats()}")


def evaluation(cache: str, nb: str) -> None:
    """One runner's compiles through CuPy's compile path (`--evaluation CACHE NB`, a process of its own)."""
    os.environ["EVOLVE_NVRTC_CACHE"] = cache
    client = nvrtc_client.install(*link.compile_server())
    from cupy.cuda import compiler

    common, arch = (SEED / "common.cu").read_text(), os.environ.get("EVOLVE_PROBE_ARCH") or compiler._get_arch()
    began = time.monotonic()
    for name, warps in MODULES:
        try:
            compiler._compile_with_cache_cuda(common + (SEED / name).read_text(), options(warps, nb), arch)
        except Exception as exc:  # the module compiled, then not loaded: no GPU here
            if "CUDA" not in type(exc).__name__ and "cuda" not in str(exc).lower():
                raise
    print(f"NB={nb}, one by one through CuPy: {time.monotonic() - began:.2f} s; the server: {client.stats()}")


def foresight() -> None:
    cache = tempfile.mkdtemp(prefix="compile-probe-")
    for nb in ("32", "16"):
        env = {**os.environ, "CUPY_CACHE_DIR": tempfile.mkdtemp(prefix="cupy-")}  # CuPy's own cache: each runner's
        subprocess.run([sys.executable, __file__, "--evaluation", cache, nb], env=env, check=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--evaluation"]:
        evaluation(*sys.argv[2:4])
        sys.exit()
    print(f"{os.cpu_count()} CPUs")
    compiles(False)
    compiles(True)
    foresight()

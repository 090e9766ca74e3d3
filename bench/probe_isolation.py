"""Probe on a GPU machine what the judge's isolation relies on; prints one line per finding.

    python bench/probe_isolation.py            # the probes, outside any sandbox
    python bench/probe_isolation.py --inner    # (run by the probe itself inside the sandbox)

1. CUDA (torch, and a CuPy kernel compiled through NVRTC) inside evolver/evaluation/sandbox.py, and its start-up cost.
2. CUDA IPC from a judge process to a runner in a nested user namespace (judge non-dumpable), both outside
   and inside the sandbox; whether the runner can read the judge's /proc files.
3. The cost of fresh inputs (make_batch) and of a full check, per benchmark shape.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNNER = r"""
import os, sys, time
mode, fd_in, fd_out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def say(text):
    os.write(fd_out, (text + "\n").encode())
if sys.argv[5] == "userns":  # first thing, while this process has one thread
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000) != 0:
        say(f"runner error unshare {os.strerror(ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid or 1000} {uid} 1"), ("gid_map", f"{gid or 1000} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
try:
    import torch, cupy
    torch.ones(1, device="cuda").sum().item()
    say(f"cuda ok uid={os.getuid()}")
    if mode == "import":  # the runner opens the judge's buffer
        handle = bytes.fromhex(os.read(fd_in, 4096).decode().strip())
        ptr = cupy.cuda.runtime.ipcOpenMemHandle(handle)
        mem = cupy.cuda.UnownedMemory(ptr, 4 << 20, None)
        x = cupy.ndarray((1 << 20,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
        x += 1
        cupy.cuda.runtime.deviceSynchronize()
        say("wrote")
    else:  # the runner exports its buffer to the judge
        ptr = cupy.cuda.runtime.malloc(4 << 20)
        cupy.cuda.runtime.memset(ptr, 0, 4 << 20)
        say(cupy.cuda.runtime.ipcGetMemHandle(ptr).hex())
        os.read(fd_in, 16)
        mem = cupy.cuda.UnownedMemory(ptr, 4 << 20, None)
        x = cupy.ndarray((1 << 20,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
        say(f"sum {float(x.sum())}")
    judge = int(sys.argv[4])
    leaks = []
    for name in ("environ", "fd/0", "status"):
        try:
            with open(f"/proc/{judge}/{name}", "rb") as f:
                f.read(16)
            leaks.append(name)
        except OSError:
            pass
    say(f"leaks {leaks}")
except BaseException as exc:
    say(f"runner error {type(exc).__name__}: {exc}")
"""


def _lines(fd: int, deadline: float, until: str = "leaks") -> list[str]:
    import select
    out = b""
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
            lines = out.decode().splitlines()
            if any(l.startswith((until, "runner error")) or (until == "hex" and len(l) == 128) for l in lines):
                break
    return out.decode().splitlines()


def ipc_probe(label: str, userns: bool, mode: str) -> None:
    import cupy
    import torch

    torch.ones(1, device="cuda")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the judge
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, mode, str(r_in), str(w_out), str(os.getpid()),
                             "userns" if userns else "plain"], pass_fds=(r_in, w_out), stderr=subprocess.PIPE)
    os.close(r_in)
    os.close(w_out)
    deadline = time.monotonic() + 90
    seen: list[str] = []
    try:
        if mode == "import":
            ptr = cupy.cuda.runtime.malloc(4 << 20)
            cupy.cuda.runtime.memset(ptr, 0, 4 << 20)
            os.write(w_in, cupy.cuda.runtime.ipcGetMemHandle(ptr).hex().encode() + b"\n")
            seen = _lines(r_out, deadline)
            mem = cupy.cuda.UnownedMemory(ptr, 4 << 20, None)
            x = cupy.ndarray((1 << 20,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
            seen.append(f"judge sees sum {float(x.sum())}")
        else:
            lines = _lines(r_out, deadline, until="hex")
            seen = list(lines)
            handle = next((l for l in lines if len(l) == 128), None)
            if handle:
                p = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(handle))
                mem = cupy.cuda.UnownedMemory(p, 4 << 20, None)
                x = cupy.ndarray((1 << 20,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
                x += 1
                cupy.cuda.runtime.deviceSynchronize()
                os.write(w_in, b"go\n")
                seen += _lines(r_out, deadline)
    except Exception as exc:
        seen.append(f"judge error {type(exc).__name__}: {exc}")
    finally:
        proc.kill()
        proc.wait()
    err = proc.stderr.read().decode()[-300:] if proc.stderr else ""
    print(f"IPC {label} [{mode}]: {seen}; {time.perf_counter() - began:.2f} s" + (f"; stderr {err!r}" if err else ""),
          flush=True)


def cuda_inside() -> None:
    t0 = time.perf_counter()
    import torch
    x = torch.ones(1000, device="cuda")
    print(f"inside: torch sum {float(x.sum())} uid {os.getuid()} pid {os.getpid()} "
          f"({time.perf_counter() - t0:.2f} s)", flush=True)
    import cupy
    t0 = time.perf_counter()
    k = cupy.RawKernel(r'extern "C" __global__ void f(float* x) { x[threadIdx.x] *= 2; }', "f")
    y = cupy.ones(32, dtype=cupy.float32)
    k((1,), (32,), (y,))
    print(f"inside: cupy NVRTC kernel {float(y.sum())} ({time.perf_counter() - t0:.2f} s), "
          f"HOME={os.environ.get('HOME')}", flush=True)
    print("inside: visible /", sorted(os.listdir("/")), "procs", [p for p in os.listdir("/proc") if p.isdigit()])
    for mode in ("export", "import"):
        ipc_probe("inside the sandbox, runner in a nested user namespace", True, mode)


def costs() -> None:
    import torch

    from qrjudge.cases import make_batch
    from qrjudge.checker import check
    from qrjudge.specs import BENCHMARK

    dev = torch.device("cuda")
    for spec in BENCHMARK:
        make_batch(spec, 1, dev)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for seed in range(5):
            a = make_batch(spec, seed + 2, dev)
        torch.cuda.synchronize()
        gen = (time.perf_counter() - t0) / 5
        h = torch.triu(a).contiguous()  # a wrong answer costs the same to check as a right one
        tau = torch.zeros(spec.batch, spec.n, device=dev)
        check(a, h, tau)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        check(a, h, tau)
        torch.cuda.synchronize()
        print(f"cost {spec.label}: make_batch {gen * 1e3:.2f} ms, check {(time.perf_counter() - t0) * 1e3:.2f} ms",
              flush=True)


def main() -> None:
    if "--inner" in sys.argv:
        cuda_inside()
        return
    from evolver.evaluation import sandbox

    print("sandbox unavailable (gpu)?", sandbox.unavailable(gpu=True), flush=True)
    for mode in ("export", "import"):
        ipc_probe("outside, runner in a user namespace", True, mode)
    with tempfile.TemporaryDirectory(prefix="evolve-eval-") as tmp:
        spec = sandbox.spec_for(Path(tmp), gpu=True, network=False, exclude=[])
        (Path(tmp) / "bench").mkdir()
        (Path(tmp) / "bench" / "probe.py").write_text(Path(__file__).read_text())
        env = {**os.environ, "HOME": tmp, "TMPDIR": "/tmp", "CUPY_CACHE_DIR": f"{tmp}/cupy"}
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(sandbox.command([sys.executable, f"{tmp}/bench/probe.py", "--inner"], spec),
                                  env=env, capture_output=True, text=True, timeout=200)
            print(proc.stdout.strip(), flush=True)
            print(f"sandboxed probe: exit {proc.returncode} in {time.perf_counter() - t0:.2f} s; stderr tail "
                  f"{proc.stderr[-800:]!r}", flush=True)
        except subprocess.TimeoutExpired as exc:
            print(f"sandboxed probe timed out: {exc.stdout!r} {exc.stderr!r}"[-1500:], flush=True)
        for variant, extra in (("without /sys", {"ro": [p for p in spec["ro"] if not p.startswith("/sys")]}),):
            proc = subprocess.run(sandbox.command([sys.executable, "-c", "import torch; print(torch.ones(2, device='cuda').sum())"],
                                                  {**spec, **extra}), env=env, capture_output=True, text=True, timeout=60)
            print(f"sandbox {variant}: exit {proc.returncode} {proc.stdout.strip()} {proc.stderr[-300:]!r}", flush=True)
    costs()


if __name__ == "__main__":
    main()

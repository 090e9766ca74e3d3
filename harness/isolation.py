"""Process hardening for the judge and the runner (Linux; a no-op where a call is not supported).

- `protect_memory()`: the judge becomes non-dumpable, so a process without CAP_SYS_PTRACE over it (an
  ordinary user's process, or any process in a child user namespace, root or not) can neither ptrace it nor
  open its /proc/<pid>/mem, environ or fd entries, and cannot write into its pipes through them.
- `own_user_namespace()`: the runner moves into a new user namespace first thing, while it has one thread;
  it keeps its files and the GPU but holds no capability over anything outside, the judge included.
- `die_with_parent()`: the runner is killed when the judge dies, so no candidate code outlives its judge.
- `pin_to_fastest_cpu()`: with EVOLVE_RUNNER_PIN=fastest, the runner's launching thread on the CPU of its
  share (`cpu_share`) where a short loop ran fastest. Off by default: it did not steady the scores on an
  H200 VM (docs/benchmarks.md, fourth pass).
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
import zlib

CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def protect_memory() -> bool:
    return bool(_libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)


def die_with_parent() -> None:
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def own_user_namespace() -> str:
    """'user namespace' when the process now lives in a user namespace of its own, else why not."""
    uid, gid = os.getuid(), os.getgid()
    if _libc().unshare(CLONE_NEWUSER) != 0:
        return f"none ({os.strerror(ctypes.get_errno())})"
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid or 1000} {uid} 1"),
                           ("gid_map", f"{gid or 1000} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:  # unmapped ids still leave the process without capabilities outside
        return f"user namespace (ids unmapped: {exc.strerror})"
    return "user namespace"


def cpu_share(allowed: list[int], visible: str, gpus_on_host: int) -> list[int]:
    """The CPUs a runner may pin to: where evaluations share a host, one per GPU, each takes every
    `gpus_on_host`-th allowed CPU, starting at its GPU's index (the first of CUDA_VISIBLE_DEVICES, `visible`),
    so two runners never pick the same fastest CPU. A GPU named by UUID gets a share by hash."""
    first = visible.split(",")[0].strip()
    if gpus_on_host <= 1 or not first or len(allowed) < gpus_on_host:
        return allowed
    index = int(first) if first.isdigit() else zlib.crc32(first.encode())
    return allowed[index % gpus_on_host::gpus_on_host]


def gpus_on_host() -> int:
    """How many NVIDIA GPUs the host has (the driver's /proc entries, which a fresh /proc in a sandbox shows
    too); 1 where it cannot tell."""
    try:
        return max(1, len(os.listdir("/proc/driver/nvidia/gpus")))
    except OSError:
        return 1


def pin_to_fastest_cpu(loops: int = 20000) -> int | None:
    """Pin the calling thread to the CPU of its share on which `loops` iterations of a Python loop ran
    fastest; the CPU, or None where affinity cannot be set. On a VM, vCPUs share their host's cores unevenly
    (a small shape's host-bound launches timed 57-95 us depending on the vCPU), but which vCPU is fast
    changes within seconds: over five evaluations each, interleaved, the seed's `full` score had a CV of
    0.9% pinned against 2.8% unpinned in one run and 2.0% against 2.2% in the next (docs/benchmarks.md)."""
    try:
        cpus = cpu_share(sorted(os.sched_getaffinity(0)), os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                         gpus_on_host())
    except (AttributeError, OSError):
        return None
    timings = []
    for cpu in cpus:
        os.sched_setaffinity(0, {cpu})
        began, n = time.perf_counter(), 0
        while n < loops:
            n += 1
        timings.append((time.perf_counter() - began, cpu))
    fastest = min(timings)[1]
    os.sched_setaffinity(0, {fastest})
    return fastest

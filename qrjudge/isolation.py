"""Process hardening for the judge and the runner (Linux; where a step is not supported, `confine` says so).

- `protect_memory()`: the judge and the supervisor become non-dumpable, so a process without CAP_SYS_PTRACE
  over them (an ordinary user's process, or any process in a child user namespace, root or not) can neither
  ptrace them nor open their /proc/<pid>/mem, environ, fd or root entries.
- `confine(writable)`: the runner's first act, while it has one thread. It moves into user, mount and PID
  namespaces of its own; every mount it can see becomes read-only except `writable` (the judge's working
  directory: the shared buffers and the runner's scratch); the solver libraries it has no use for are
  masked (`SOLVER_LIBRARY`, unless something torch or CuPy loads at import needs them); a fresh /proc shows
  only its own processes; and a second user namespace locks all of that (mounts copied into a less privileged
  namespace keep their read-only flag for good, and cannot be unmounted). The candidate can then write
  neither the judge's files (this evaluation's or the next one's) nor the user's, see no other process (the
  judge's command line, the supervisor's /proc/<pid>/root), or load cuSOLVER, whatever it runs.
- `die_with_parent()`: the runner is killed when the judge dies, so no candidate code outlives its judge.
- `pin_to_fastest_cpu()`: with EVOLVE_RUNNER_PIN=fastest, the runner's launching thread on the CPU of its
  share (`cpu_share`) where a short loop ran fastest. Off by default: it did not steady the scores on an
  H200 VM (docs/benchmarks-history.md, fourth pass).
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import select
import signal
import struct
import sys
import time
import zlib

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
SYS_MOUNT_SETATTR, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, 0x8000, 1  # Linux >= 5.12, one number on every arch
AT_FDCWD = -100
# statvfs flag -> the mount flag that keeps it (a remount must repeat the flags the kernel locked)
_KEEP = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}
# Shared objects of library factorisations: cuSOLVER (and torch's lazily loaded linear algebra, which links
# it and MAGMA), MAGMA, reference LAPACK, and the OpenBLAS SciPy bundles (its LAPACK: scipy.linalg, which only
# SciPy loads; NumPy's own copy, in numpy.libs, is not looked for: CuPy needs NumPy). Masked in the runner's view
# so nothing it runs can load them.
SOLVER_LIBRARY = re.compile(r"^lib(cusolver|magma|lapack|torch_cuda_linalg|scipy_openblas)[^/]*\.so[.0-9]*$")


def libc() -> ctypes.CDLL:
    """The C library, errno kept; a new handle each time, so the types a caller gives its functions stay its own."""
    return ctypes.CDLL(None, use_errno=True)


def protect_memory() -> bool:
    return bool(libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)


def die_with_parent() -> None:
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class ConfineError(Exception):
    """A step of the confinement failed; str() says which."""


def _call(result: int, what: str) -> None:
    if result != 0:
        raise ConfineError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _enc(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def _mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    _call(libc().mount(_enc(source), _enc(target), _enc(fstype), ctypes.c_ulong(flags), None),
          f"mount {source or ''} on {target}")


def _user_namespace(flags: int, uid: int, gid: int) -> None:
    """Unshare `flags` with a new user namespace, keeping the caller's ids (so files keep their owners)."""
    _call(libc().unshare(ctypes.c_int(CLONE_NEWUSER | flags)), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _mount_setattr(path: str, set_: int = 0, clear: int = 0) -> int:
    """mount_setattr(2) on `path` and every mount below it; 0, or -1 with errno set."""
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", set_, clear, 0, 0))
    c_long = ctypes.c_long
    return int(libc().syscall(c_long(SYS_MOUNT_SETATTR), c_long(AT_FDCWD), ctypes.c_char_p(path.encode()),
                               c_long(AT_RECURSIVE), attr, c_long(32)))


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].encode().decode("unicode_escape") for line in f]


def _read_only_everywhere(writable: list[str]) -> None:
    """Every mount read-only, then `writable` (bound onto themselves first) writable again."""
    for path in writable:
        _mount(path, path, None, MS_BIND | MS_REC)
    if _mount_setattr("/", set_=MOUNT_ATTR_RDONLY) == 0:
        for path in writable:
            _call(_mount_setattr(path, clear=MOUNT_ATTR_RDONLY), f"writable {path}")
        return
    for point in sorted(set(_mount_points()), key=len):  # kernels before 5.12: one remount per mount point
        if any(point == w or point.startswith(w.rstrip("/") + "/") for w in writable):
            continue
        try:
            keep = os.statvfs(point).f_flag
        except OSError:
            continue  # not reachable from here (a mount under a masked path)
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | sum(ms for st, ms in _KEEP.items() if keep & st)
        _mount(None, point, None, flags)


def _elf_needed(path: str) -> set[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF shared object (empty for anything else)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return set()
    if data[:5] != b"\x7fELF\x02" or data[5] != 1:
        return set()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out: set[str] = set()
    for sh in sections:
        if sh[1] != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[sh[6]]  # sh_link: its string table
        for offset in range(sh[4], sh[4] + sh[5], 16):
            tag, value = struct.unpack_from("<qQ", data, offset)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                start = strtab[4] + value
                out.add(data[start:data.index(b"\0", start)].decode(errors="replace"))
    return out


def solver_libraries() -> list[str]:
    """The solver libraries this Python could load (`SOLVER_LIBRARY`, in site-packages and the CUDA and
    system library directories), minus any that a library torch or CuPy loads at import needs."""
    roots = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    dirs = [d for r in roots for d in (f"{r}/torch/lib", *glob.glob(f"{r}/nvidia/*/lib"), f"{r}/scipy.libs",
                                       *glob.glob(f"{r}/cupy*/.data/lib"), *glob.glob(f"{r}/nvidia/cu*/lib"))]
    dirs += [os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/lib64", "/usr/lib/x86_64-linux-gnu",
             "/usr/lib/aarch64-linux-gnu", "/usr/lib64", *glob.glob("/usr/local/cuda*/lib64")]
    found = {os.path.realpath(p) for d in dirs if os.path.isdir(d) for p in glob.glob(f"{d}/*.so*")
             if SOLVER_LIBRARY.match(os.path.basename(p))}
    needed: set[str] = set()
    for r in roots:  # what loads at import: torch's libraries, CuPy's core (not its solver bindings)
        for lib in (*glob.glob(f"{r}/torch/lib/*.so*"), *glob.glob(f"{r}/torch/_C*.so"),
                    *glob.glob(f"{r}/cupy/_core/*.so"), *glob.glob(f"{r}/cupy_backends/cuda/api/*.so")):
            if not SOLVER_LIBRARY.match(os.path.basename(lib)):
                needed |= _elf_needed(lib)
    return sorted(p for p in found if not any(os.path.basename(p).startswith(n.split(".so")[0] + ".so")
                                               for n in needed))


def judges_only() -> tuple[str, ...]:
    """What no confined process may see at all: the judges' GPU locks (qrjudge/gpulock.py), which a candidate
    could otherwise hold to stall every other evaluation's timing."""
    locks = os.environ.get("EVOLVE_GPU_LOCKS", "")
    return (locks,) if locks else ()


def confine(writable: list[str], mask_solvers: bool = True, hidden: tuple[str, ...] = ()) -> str:
    """The runner's confinement (module docstring); returns what it is, in words, or raises ConfineError.
    Must run while the process has one thread. The caller becomes the child that runs on, PID 1 of the new
    PID namespace; the original process waits for it and exits with its code (it never returns)."""
    uid, gid = os.getuid(), os.getgid()
    masked = solver_libraries() if mask_solvers else []  # (the baseline is torch.geqrf: it needs them)
    _user_namespace(CLONE_NEWNS | CLONE_NEWPID, uid, gid)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    for lib in masked:
        _mount("/dev/null", lib, None, MS_BIND)
    for path in hidden:  # an empty directory in its place (the judges' GPU locks: qrjudge/gpulock.py)
        if os.path.isdir(path):
            _mount("tmpfs", os.path.realpath(path), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # (read-only below)
    _read_only_everywhere([os.path.realpath(p) for p in writable])
    alive_r, alive_w = os.pipe()  # the child sees end-of-file on it once the waiting parent is gone
    child = os.fork()
    if child:
        _forward(child, keep=alive_w)
    os.close(alive_w)
    die_with_parent()
    if select.select([alive_r], [], [], 0)[0]:  # the parent died before the line above
        os._exit(1)
    os.close(alive_r)
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        proc = "its own /proc"
    except ConfineError as exc:  # a /proc that hides parts of itself (a container's) cannot be mounted again
        proc = f"the host's /proc ({exc})"
    _user_namespace(CLONE_NEWNS, uid, gid)  # the lock: the mounts above are now this namespace's parent's
    return (f"user, mount and PID namespaces, {proc}; read-only but for {len(writable)} directory; "
            f"{len(masked)} solver librar{'y' if len(masked) == 1 else 'ies'} masked")


def _forward(child: int, keep: int) -> None:
    """The original runner process: waits for the confined one and exits as it did (killed with it)."""
    for fd in range(3, 256):  # the control pipes: the judge must see them close when the child dies
        if fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


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
    0.9% pinned against 2.8% unpinned in one run and 2.0% against 2.2% in the next (docs/benchmarks-history.md)."""
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

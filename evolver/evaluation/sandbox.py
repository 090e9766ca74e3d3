"""The sandbox every evaluation runs in, built from Linux namespaces by this file alone (no bubblewrap).

The engine runs `python3 -I -S evolver/evaluation/sandbox.py SPEC -- ARGV...` (see `command`); this file, with the
standard library only, then:

1. unshares user, mount, PID, IPC, UTS and (unless the problem asks for it) network namespaces, mapping the
   caller's uid to a non-root uid inside, so the evaluated program holds no capabilities after it execs;
2. forks the namespace's init (PID 1), which builds a new root on a tmpfs: read-only binds of the system
   (`/usr`, `/lib`, the Python installation...) and of nothing else, a fresh `/proc` that shows only the
   sandbox's processes, a private `/tmp` and `/dev/shm`, `/dev/null` and friends plus the GPU's device
   nodes, and the evaluation's scratch directory read-write; the old root is detached (`pivot_root`);
3. starts the evaluator as PID 2 with `no_new_privs`, reaps, and watches the namespace's process count and
   resident memory; when the evaluator exits, init exits and the kernel kills whatever is left in the PID
   namespace (daemons, `setsid` children, processes holding the output pipe open).

The launcher dies with its parent (`PR_SET_PDEATHSIG`, set by the engine) and init dies with the launcher,
so `kill -9` of the engine ends the whole evaluation. Not reachable from inside: the engine's processes and
environment, the repository and its `.git`, the user's home, the network (unless allowed), other
evaluations. What is not covered is listed in docs/SECURITY.md.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
# statvfs flag -> the mount flag that keeps it (a remount must repeat the flags the kernel locked)
_KEEP = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME,
         4096: MS_RELATIME}
EXIT_SETUP = 125  # the sandbox itself could not be built (the message on stderr starts with "sandbox:")
INNER_UID = 1000  # what root outside becomes inside: an ordinary user without capabilities
SYSTEM_RO = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt",
             "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
             "/etc/nsswitch.conf", "/etc/localtime", "/etc/alternatives", "/etc/os-release", "/etc/hosts")
BASIC_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class SandboxError(Exception):
    """The sandbox cannot be built here; str() says why."""


# --- what the engine calls ------------------------------------------------------------------------------

def python_paths(exclude: list[Path]) -> list[str]:
    """The Python installation the evaluator runs on (prefixes, the interpreter's directory, site-packages),
    minus anything inside `exclude` (the repository), except a virtual environment's own prefix."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths = set(prefixes)
    for entry in sys.path:
        if entry and os.path.isdir(entry) and not any(_inside(entry, str(x)) for x in exclude):
            paths.add(entry)
    return sorted(paths)


def spec_for(scratch: Path, *, gpu: bool, network: bool, exclude: list[Path], read_only: Sequence[Path] = (),
             max_procs: int = 256, max_rss_gb: float = 32.0) -> dict[str, Any]:
    """What one evaluation may see: the system read-only, `scratch` read-write but for `read_only` inside it
    (the judge's files), the GPU if it needs one."""
    ro = [*SYSTEM_RO, *python_paths(exclude)]
    devices = list(BASIC_DEVICES)
    if gpu:
        devices += sorted(str(p) for p in Path("/dev").glob("nvidia*"))
    return {"ro": _outermost(p for p in ro if os.path.lexists(p)), "rw": [str(scratch)],
            "ro_inside": [str(p) for p in read_only],
            "devices": [d for d in devices if os.path.exists(d)], "network": network, "workdir": str(scratch),
            "max_procs": max_procs, "max_rss_bytes": int(max_rss_gb * 2**30)}


def command(argv: list[str], spec: dict[str, Any]) -> list[str]:
    """The command line that runs `argv` inside the sandbox `spec` (without namespaces for
    {"isolate": false}); the launcher dies with the calling process."""
    spec = {**spec, "parent": os.getpid()}
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), json.dumps(spec), "--", *argv]


_probed: dict[bool, str | None] = {}


def unavailable(gpu: bool = False) -> str | None:
    """None when a sandbox can be built on this machine, else the reason (checked once per process)."""
    if gpu not in _probed:
        with tempfile.TemporaryDirectory(prefix="evolve-eval-probe-") as tmp:
            argv = command([sys.executable, "-I", "-S", "-c", "pass"],
                           spec_for(Path(tmp), gpu=gpu, network=False, exclude=[]))
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired) as exc:
                _probed[gpu] = f"the sandbox launcher did not run ({exc})"
            else:
                lines = (proc.stderr.strip() or f"exit code {proc.returncode}").splitlines()
                _probed[gpu] = None if proc.returncode == 0 else lines[-1].removeprefix("sandbox: ")
    return _probed[gpu]


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def _outermost(paths: Any) -> list[str]:
    """Distinct paths with those inside another one dropped (a bind of the outer one shows them)."""
    out: list[str] = []
    for p in sorted(set(paths), key=len):
        if not any(p == o or p.startswith(o.rstrip("/") + "/") for o in out):
            out.append(p)
    return sorted(out)


def sandbox_line(on: bool, network: bool) -> str:
    """What `evolve start` says first, and `evolve status` repeats."""
    if on:
        return ("sandbox: on (each evaluation in its own user, mount, PID, IPC" + (", network" if not network else "")
                + " namespaces; the repository, your home and the engine are out of its sight)")
    return ('WARNING: sandbox off ([evaluation] sandbox = "off"): candidate code runs as you, and can read your '
            "files and reach the network")


def protect_memory() -> None:
    """The engine holds API keys in its memory and environment: without CAP_SYS_PTRACE over it (any other
    process of an ordinary user, or anything in a sandbox) nothing can read /proc/<engine>/environ or mem."""
    _libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


# --- inside: the launcher, init and the evaluator ---------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(err)}")


def _enc(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = _enc
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {source or ''} on {target}")


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mount_points_under(path: str) -> list[str]:
    """Mount points at or below `path` in this mount namespace (from /proc/self/mountinfo)."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")  # \040 and friends
            if point == path or point.startswith(path.rstrip("/") + "/"):
                points.append(point)
    return points


def _bind(source: str, root: str, writable: bool) -> None:
    target = root + source
    if os.path.islink(source) and os.path.dirname(source) == "/":  # /lib -> usr/lib on merged-/usr systems
        os.symlink(os.readlink(source), target)
        return
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if writable:
        return
    for point in sorted(_mount_points_under(target), key=len):
        keep = os.statvfs(point).f_flag
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
        flags |= sum(ms for st, ms in _KEEP.items() if keep & st)
        try:
            _mount(None, point, None, flags)
        except SandboxError:
            if point == target:
                raise
            _check(_libc.umount2(point.encode(), MNT_DETACH), f"read-only {point}")


def _build_root(spec: dict[str, Any]) -> None:
    """In init: its own mount namespace (the launcher keeps the old root), the new root on a tmpfs, then
    pivot_root into it."""
    flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (0 if spec["network"] else CLONE_NEWNET)
    _check(_libc.unshare(ctypes.c_int(flags)), "cannot create namespaces (unshare)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = spec["root"]
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    os.makedirs(root + "/tmp")  # first: read-only binds below /tmp (a Python installation there) go on top
    _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=4g")
    for path in spec["ro"]:
        _bind(path, root, writable=False)
    os.makedirs(root + "/dev", exist_ok=True)
    _mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m")
    for node in spec["devices"]:
        _bind(node, root, writable=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/dev/shm", exist_ok=True)
    _mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1g")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in spec["rw"]:
        _bind(path, root, writable=True)
    for path in spec.get("ro_inside", []):  # the judge's files, inside the writable scratch
        _bind(path, root, writable=False)
    os.makedirs(root + "/.old", exist_ok=True)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise SandboxError(f"pivot_root: unknown system call number on {platform.machine()}")
    _check(_libc.syscall(number, root.encode(), (root + "/.old").encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old", MNT_DETACH), "detach the old root")
    os.rmdir("/.old")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    hostname = b"evolve-sandbox"
    _libc.sethostname(hostname, len(hostname))


def _usage(spec: dict[str, Any]) -> str:
    """'' while the namespace is within its limits, else what was exceeded."""
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    if len(pids) > spec["max_procs"]:
        return f"the evaluation started more than {spec['max_procs']} processes"
    rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                rss += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    if rss > spec["max_rss_bytes"]:
        return f"the evaluation's processes used more than {spec['max_rss_bytes'] / 2**30:g} GiB of memory"
    return ""


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


def _init(spec: dict[str, Any], argv: list[str]) -> int:
    """PID 1 of the sandbox: build the root, start the evaluator, reap, watch the limits."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _build_root(spec)
    child = os.fork()
    if child == 0:
        try:
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            os.chdir(spec["workdir"])
            os.execvpe(argv[0], argv, os.environ)
        except OSError as exc:
            print(f"sandbox: cannot start {argv[0]!r}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(127)
    last_check = 0.0
    while True:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == child:
            return _exit_code(status)
        if pid == 0:
            time.sleep(0.02)
        if time.monotonic() - last_check > 0.2:
            last_check = time.monotonic()
            exceeded = _usage(spec)
            if exceeded:
                print(f"sandbox: {exceeded}; all of them were killed", file=sys.stderr, flush=True)
                os.kill(-1, signal.SIGKILL)  # from PID 1: every other process of the namespace
                return 128 + signal.SIGKILL


def _launch(spec: dict[str, Any], argv: list[str]) -> int:
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWPID)), "cannot create namespaces (unshare)")
    inner_uid, inner_gid = uid or INNER_UID, gid or INNER_UID
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inner_uid} {uid} 1")
    _write("/proc/self/gid_map", f"{inner_gid} {gid} 1")
    spec["root"] = tempfile.mkdtemp(prefix="evolve-sandbox-root-")
    try:
        init = os.fork()
        if init == 0:
            code = 1
            try:
                code = _init(spec, argv)
            except (SandboxError, OSError) as exc:
                print(f"sandbox: {exc}", file=sys.stderr, flush=True)
                code = EXIT_SETUP
            finally:
                os._exit(code)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: os.kill(init, signal.SIGKILL))
        _, status = os.waitpid(init, 0)
        return _exit_code(status)
    finally:
        os.rmdir(spec["root"])


def _plain(argv: list[str]) -> int:
    """`sandbox = "off"`: no namespaces, only the tie to the engine's life."""
    try:
        os.execvpe(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"sandbox: cannot start {argv[0]!r}: {exc.strerror}", file=sys.stderr, flush=True)
    return 127


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: sandbox.py SPEC_JSON -- ARGV...", file=sys.stderr)
        return 2
    spec = json.loads(args[0])
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the engine's death ends the evaluation, sandbox or not
    if spec.get("parent") and os.getppid() != spec["parent"]:
        return EXIT_SETUP  # the engine died before the line above: nobody waits for this evaluation
    if not spec.get("isolate", True):
        return _plain(args[2:])
    try:
        return _launch(spec, args[2:])
    except (SandboxError, OSError) as exc:
        print(f"sandbox: {exc}", file=sys.stderr, flush=True)
        return EXIT_SETUP


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)

"""Process hardening for the judge and the runner (Linux; a no-op where a call is not supported).

- `protect_memory()`: the judge becomes non-dumpable, so a process without CAP_SYS_PTRACE over it (an
  ordinary user's process, or any process in a child user namespace, root or not) can neither ptrace it nor
  open its /proc/<pid>/mem, environ or fd entries, and cannot write into its pipes through them.
- `own_user_namespace()`: the runner moves into a new user namespace first thing, while it has one thread;
  it keeps its files and the GPU but holds no capability over anything outside, the judge included.
- `die_with_parent()`: the runner is killed when the judge dies, so no candidate code outlives its judge.
"""

from __future__ import annotations

import ctypes
import os
import signal

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

"""The repository's evolve lock: one engine per repository, whichever worktree it runs in (the lock lives in
the common git directory).

flock dies with its process, so a `kill -9` leaves no stale lock; ref lock files such a kill may leave behind
are removed when the lock is taken, which is safe because only a lock holder writes these refs.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path


def take(common_dir: Path, git_dir: Path) -> int | None:
    """The lock's file descriptor (closing it releases the lock); None if another engine holds it. `common_dir`:
    the repository's common git directory (the lock's), `git_dir`: this worktree's (its ref locks)."""

    common = common_dir / "evolve"
    common.mkdir(exist_ok=True)
    fd = os.open(common / "engine.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    _remove_stale_ref_locks(git_dir)
    return fd


def _remove_stale_ref_locks(git_dir: Path) -> None:
    for area in ("refs/heads/evolve", "refs/evolve", "refs/notes"):
        base = git_dir / area
        if base.is_dir():
            for lock in base.rglob("*.lock"):
                lock.unlink(missing_ok=True)
    (git_dir / "refs/heads/best.lock").unlink(missing_ok=True)
    packed_lock = git_dir / "packed-refs.lock"  # shared with the user's git: only if clearly stale
    if packed_lock.exists() and time.time() - packed_lock.stat().st_mtime > 60:
        packed_lock.unlink(missing_ok=True)
    for stale in (git_dir / "evolve").glob("index-*"):
        stale.unlink(missing_ok=True)

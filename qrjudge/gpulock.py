"""One GPU shared by several evaluations: their untimed work side by side, each timed region alone.

Where evaluations share a GPU (`[evaluation] per_gpu` > 1; the engine sets EVOLVE_GPU_LOCKS to a directory every
evaluation's judge sees and no candidate does), each judge takes this GPU's lock: shared while its candidate is
imported and tested, exclusive while its clock is calibrated and the candidate is timed, shared again while it
checks the timed calls it kept (qrjudge/judge.py, `evaluate_sharing`). Candidate code is alive
only while its judge holds the lock (the judge kills the process that ran the tests, and waits until nothing of
it is left, before it lets go; the process that is timed imports the candidate only once the exclusive lock is
held), so while one candidate is timed no other candidate's code exists at all, let alone has work on the GPU.

A reader-writer lock from two `flock`s per GPU: readers pass a gate that a waiting writer holds, so a writer waits
only for the readers already in (writers are not starved by a stream of readers). `flock` locks die with their
process: a judge killed at any moment frees the GPU. The judge opens the files close-on-exec, and the runner's
confinement hides the directory (qrjudge/isolation.py, `confine(hidden=...)`): a candidate can neither hold the
lock nor wait on it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class GpuLock:
    directory: str
    gpu: str  # CUDA_VISIBLE_DEVICES of the evaluation (an index or a UUID)
    held: list[tuple[str, float, float]] = field(default_factory=list)  # (how, from, to): CLOCK_MONOTONIC

    @classmethod
    def from_env(cls) -> GpuLock | None:
        directory = os.environ.get("EVOLVE_GPU_LOCKS", "")
        if not directory or not os.path.isdir(directory):
            return None
        return cls(directory, os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip() or "0")

    def _open(self, what: str) -> int:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", self.gpu)
        return os.open(os.path.join(self.directory, f"gpu-{name}.{what}"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def _taken(self, how: str) -> Iterator[None]:
        gate, rw = self._open("gate"), self._open("rw")
        try:
            fcntl.flock(gate, fcntl.LOCK_EX)  # in line: behind a writer that waits, ahead of later readers
            try:
                fcntl.flock(rw, fcntl.LOCK_EX if how == "exclusive" else fcntl.LOCK_SH)
            finally:
                fcntl.flock(gate, fcntl.LOCK_UN)
            began = time.monotonic()
            try:
                yield
            finally:
                self.held.append((how, began, time.monotonic()))
                fcntl.flock(rw, fcntl.LOCK_UN)
        finally:
            os.close(gate)
            os.close(rw)

    def shared(self) -> contextlib.AbstractContextManager[None]:
        """Untimed work: any number of evaluations at once, none while one holds it exclusively."""
        return self._taken("shared")

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """A timed region: this evaluation alone on the GPU."""
        return self._taken("exclusive")

"""One GPU shared by several evaluations: their untimed work side by side, each timed region alone.

Where evaluations share a GPU (`[evaluation] per_gpu` > 1; the engine sets EVOLVE_GPU_LOCKS to a directory every
evaluation's judge sees and no candidate does), each judge takes this GPU's lock: shared while its candidate is
imported and tested; exclusive while its clock is calibrated, relaxed while the process to be timed imports the
candidate and warms it up (others' untimed work may run beside it, nobody else's timed region), exclusive again
while the candidate is timed; shared again while it checks the timed calls it kept (qrjudge/sharing.py,
`evaluate_sharing`). Candidate code is alive only while its judge holds the lock (the judge kills the process that
ran the tests, and waits until nothing of it is left, before it lets go; the process that is timed imports the
candidate only once its clock is calibrated, and is gone before the lock is let go), so while one candidate is
timed no other candidate's code exists at all, let alone has work on the GPU.

A reader-writer lock from three `flock`s per GPU: readers pass a gate that a waiting writer holds, so a writer
waits only for the readers already in (writers are not starved by a stream of readers); a writer first takes the
`timed` file, which it keeps while it is relaxed, so that no other writer comes between its two exclusive holds
(the relaxed hold is the shared lock on the same descriptor: `flock` converts it, and only readers can slip into
the conversion, which the writer's own relaxed hold admits anyway). `flock` locks die with their process: a judge
killed at any moment frees the GPU. The judge opens the files close-on-exec, and the runner's confinement hides
the directory (qrjudge/isolation.py, `confine(hidden=...)`): a candidate can neither hold the lock nor wait on it.
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
    def shared(self) -> Iterator[None]:
        """Untimed work: any number of evaluations at once, none while one holds it exclusively."""
        gate, rw = self._open("gate"), self._open("rw")
        try:
            _through_gate(gate, rw, fcntl.LOCK_SH)
            began = time.monotonic()
            try:
                yield
            finally:
                self.held.append(("shared", began, time.monotonic()))
                fcntl.flock(rw, fcntl.LOCK_UN)
        finally:
            os.close(gate)
            os.close(rw)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[Held]:
        """A timed region: this evaluation alone on the GPU, unless it relaxes the hold (`Held.relax`)."""
        timed, gate, rw = self._open("timed"), self._open("gate"), self._open("rw")
        try:
            fcntl.flock(timed, fcntl.LOCK_EX)  # no other writer from here to the end, relaxed or not
            _through_gate(gate, rw, fcntl.LOCK_EX)
            held = Held(self, gate, rw, time.monotonic())
            try:
                yield held
            finally:
                self.held.append((held.how, held.since, time.monotonic()))
                fcntl.flock(rw, fcntl.LOCK_UN)
                fcntl.flock(timed, fcntl.LOCK_UN)
        finally:
            for fd in (timed, gate, rw):
                os.close(fd)


def _through_gate(gate: int, rw: int, how: int) -> None:
    fcntl.flock(gate, fcntl.LOCK_EX)  # in line: behind a writer that waits, ahead of later readers
    try:
        fcntl.flock(rw, how)
    finally:
        fcntl.flock(gate, fcntl.LOCK_UN)


@dataclass
class Held:
    """An exclusive hold, which its writer may relax to a shared one and take back, no other writer between."""

    lock: GpuLock
    gate: int
    rw: int
    since: float
    how: str = "exclusive"

    def _now(self, how: str) -> None:
        now = time.monotonic()  # exclusive still (relax) or already (tighten): no exclusive span meets another's
        self.lock.held.append((self.how, self.since, now))
        self.how, self.since = how, now

    def relax(self) -> None:
        """From here, untimed work of the writer's: others' untimed work may run beside it, no other writer's timed
        region (a writer that ends relaxed lets go of the lock as it is)."""
        self._now("relaxed")
        fcntl.flock(self.rw, fcntl.LOCK_SH)

    def tighten(self) -> None:
        """The exclusive hold back, once the readers that came in meanwhile are out (later ones wait at the gate)."""
        _through_gate(self.gate, self.rw, fcntl.LOCK_EX)
        self._now("exclusive")

"""Prestarted evaluators: processes started before their candidate exists (importing torch, say), waiting
for one line on stdin, kept per evaluation slot (docs/ARCHITECTURE.md, step 5)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from evolver.evaluation.processes import EvaluatorStartError, collect, kill_group, kill_tagged, spawn

# Processes kept waiting per slot. Two, because a judge's own start (torch, CuPy, the CUDA context: 3.9-5.6 s
# on the H200, cold) is longer than a prestarted `full` evaluation of the seed (3.6 s of the judge's wall): with
# one, started when the evaluation before it began, the engine's evaluations took 4.9 s (median of 20) and
# ten candidates 48 s (the notebook's 2026-12-01-late, runs 2-3). With two ahead, `evolve start` on the QR
# problem judged 24 tune candidates in 159 s on an H200 (2026-12-02, run 2); one ahead was not measured in that
# run, so what the second buys is not known. They wait without touching the GPU.
PRESTART_AHEAD = 2


@dataclass
class Prestarted:
    proc: asyncio.subprocess.Process | None  # None: it could not be started
    tmp: tempfile.TemporaryDirectory[str]  # the evaluator's files now, the candidate's kernel at the go
    tag: str | None  # what to sweep for when it is discarded (None: the sandbox ends its processes)

    @property
    def dest(self) -> Path:
        return Path(self.tmp.name)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def go(self, timeout_s: float, line: bytes = b"go\n") -> dict[str, Any]:
        """The go line sent (the candidate's kernel directory is in place), the evaluation's result."""
        if self.proc is None:
            raise EvaluatorStartError("the evaluator could not be started")
        return await collect(self.proc, timeout_s, self.tag, go=line)

    def discard(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            kill_group(self.proc.pid)
            if self.tag:
                kill_tagged(self.tag)  # (after an evaluation, `collect` has swept already)
        self.tmp.cleanup()


async def prestart(argv: list[str], workdir: Path, env: dict[str, str], tmp: tempfile.TemporaryDirectory[str],
                   tag: str | None) -> Prestarted:
    """`argv` started to wait for its go line in `tmp` (with no process where it could not be started)."""
    try:
        proc: asyncio.subprocess.Process | None = await spawn(argv, workdir, env, with_stdin=True)
    except EvaluatorStartError:
        proc = None
    return Prestarted(proc, tmp, tag)


SlotT = TypeVar("SlotT", bound=Hashable)


class Waiting(Generic[SlotT]):
    """Each slot's prestarted processes, oldest first; `start(slot, mode)` makes a new one."""

    def __init__(self, start: Callable[[SlotT, str], Awaitable[Prestarted]]) -> None:
        self.start = start
        self.by_slot: dict[SlotT, list[Prestarted]] = {}

    async def take(self, slot: SlotT, mode: str) -> Prestarted:
        """The slot's oldest live process (one that died is replaced), the queue topped up behind it: those
        warm up while this one runs."""
        waiting = self.by_slot.setdefault(slot, [])
        ready = None
        while waiting and ready is None:
            first = waiting.pop(0)
            if first.alive:
                ready = first
            else:
                first.discard()
        if ready is None:
            ready = await self.start(slot, mode)
        while len(waiting) < PRESTART_AHEAD:
            waiting.append(await self.start(slot, mode))
        return ready

    async def ready(self, slot: SlotT, mode: str) -> None:
        """A process waiting for the slot, started now where none is alive: called as a run starts, so a slot's
        first evaluation (the second slot's first child, which comes only once the seed is judged) does not pay
        a process's start either."""
        waiting = self.by_slot.setdefault(slot, [])
        if not any(p.alive for p in waiting):
            waiting.append(await self.start(slot, mode))

    async def close(self) -> None:
        """Stop the processes that no candidate will use."""
        for waiting in self.by_slot.values():
            for ready in waiting:
                ready.discard()
                if ready.proc is not None:
                    await ready.proc.wait()
        self.by_slot.clear()

"""Modules compiled ahead, side by side: every `cupy.RawModule` a candidate makes while it is imported is compiled
then, beside the others, and the import returns once all of them are (the runner's `load`).

CuPy compiles a RawModule on its first `get_function`, so a candidate whose modules are used one by one (the QR
seed: four of them, its `full` tests reaching each in turn) pays their NVRTC compiles one after another: most of
its first evaluation (docs/benchmarks.md, "Throughput"). Made at import, they are compiled here at once, up to
THREADS at a time (through the judge's compile server, which runs several compiles at once, or NVRTC in this
process), so the import waits for the slowest module, not the sum; the candidate's own first `get_function` then
finds the module compiled (CuPy keeps it by its source and options) and the same binary as ever.

The threads are the judge's and run CuPy's code alone: a module of a class of the candidate's own (a subclass,
whose methods could be anything) is left to compile when the candidate asks for it. None outlives the import:
`during` waits for every one before the runner reports the candidate loaded, so no compile of this kind runs
while the candidate is tested or timed, and a module made later (in a call) compiles on first use as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

THREADS = 8  # compiles asked for at once (the compile server runs its own WORKERS of them at a time)
LIMIT = 16  # modules compiled ahead an import: a candidate that makes more (one a configuration, say) has the rest
# compiled where it first uses them, so an import never waits for compiles it may never need beyond these


class Ahead:
    """The RawModules made during an import, compiled side by side (`install` puts this in CuPy's place)."""

    def __init__(self, cupy: Any, base: Any) -> None:
        self.cupy, self.base = cupy, base  # CuPy, and its own RawModule class
        self.pool: ThreadPoolExecutor | None = None
        self.jobs: list[Future[Any]] = []
        self.compiled = 0  # modules compiled here (ahead of the candidate's first use)

    @contextlib.contextmanager
    def during(self, on: bool = True) -> Iterator[None]:
        """Within this block a RawModule made is compiled at once, beside the others; at its end, all are done.
        (`on` false: not at all, as in a timed runner, whose modules the testing runner's import has compiled: it
        loads each where its calls first need it, as before.)"""
        if not on:
            yield
            return
        self.pool = ThreadPoolExecutor(THREADS, thread_name_prefix="qrjudge-ahead")
        try:
            yield
        finally:
            pool, self.pool = self.pool, None
            pool.shutdown(wait=True)
            self.compiled += sum(1 for job in self.jobs if job.result())
            self.jobs.clear()

    def made(self, module: Any, exact: bool) -> None:
        """A RawModule was made: compiled now, beside the others, if an import is under way and the module is
        CuPy's own class (`exact`)."""
        if self.pool is None or not exact or len(self.jobs) >= LIMIT:
            return
        device = self.cupy.cuda.runtime.getDevice()  # the maker's device: CuPy keeps a module per device
        self.jobs.append(self.pool.submit(self._compile, module, device))

    def _compile(self, module: Any, device: int) -> bool:
        try:
            self.cupy.cuda.Device(device).use()
            self.base.compile(module)  # CuPy's own method: NVRTC (or the cache) and the module loaded
        except Exception:  # the candidate sees a failure where it asks for the module: its call, CuPy's own error
            return False
        return True


def install(cupy: Any) -> Ahead | None:
    """`cupy.RawModule` replaced by a subclass that tells `Ahead` of each module made (the runner's `main`, before
    any candidate code). The subclass adds nothing else: every method and attribute is CuPy's. None where CuPy's
    class cannot be subclassed: its modules then compile on first use, as CuPy has it."""
    original = cupy.RawModule
    ahead = Ahead(cupy, original)
    try:
        class RawModule(original):  # type: ignore[misc, valid-type]
            __doc__ = original.__doc__

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                ahead.made(self, type(self) is RawModule)
    except TypeError:
        return None
    RawModule.__module__, RawModule.__qualname__ = original.__module__, original.__qualname__
    cupy.RawModule = RawModule
    return ahead

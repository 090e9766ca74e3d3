"""The buffers the judge shares with the runner: the input `A`, the outputs `H` and `tau` on the GPU, and
`stage`, host memory through which the judge hands over a primed call's input (qrjudge/judge.py).

The judge allocates the GPU buffers (CUDA IPC through CuPy: a base allocation per buffer, exported as a
64-byte handle) and sends the handles to the runner, which opens them. `stage` is a file both processes map.
Each call uses a view of the leading elements shaped for its spec. The runner can read and write these four
buffers and nothing else of the judge's memory. On the CPU self-test (`--device cpu`) all four are shared
files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.utils.dlpack

NAMES = ("a", "h", "tau")  # on the device; "stage" is always host memory


def _wrap(ptr: int, count: int, owner: Any) -> torch.Tensor:
    import cupy

    memory = cupy.cuda.UnownedMemory(ptr, count * 4, owner)
    array = cupy.ndarray((count,), cupy.float32, cupy.cuda.MemoryPointer(memory, 0))
    return torch.utils.dlpack.from_dlpack(array)


class Arena:
    """Three flat float32 buffers; `views(batch, n)` shapes them for one call."""

    def __init__(self, buffers: dict[str, torch.Tensor], keep: list[Any]) -> None:
        self.buffers = buffers
        self._keep = keep  # the CuPy allocations (or opened handles) behind the tensors

    @classmethod
    def allocate(cls, max_matrix: int, max_tau: int, max_stage: int, device: str) -> tuple["Arena", dict[str, Any]]:
        """In the judge: new buffers for up to `max_matrix` elements of A and H and `max_stage` of the stage;
        (arena, what the runner needs)."""
        counts = {"a": max_matrix, "h": max_matrix, "tau": max_tau, "stage": max_stage}
        files = {name: {"path": str(Path(f"arena-{name}").resolve()), "count": counts[name]}
                 for name in (*NAMES, "stage")}
        if device == "cpu":
            return cls.open(files), files
        import cupy

        buffers, keep, handles = {}, [], {"stage": files["stage"]}
        for name in NAMES:
            memory = cupy.cuda.Memory(max(4, counts[name] * 4))
            keep.append(memory)
            buffers[name] = _wrap(memory.ptr, counts[name], memory)
            handles[name] = {"handle": cupy.cuda.runtime.ipcGetMemHandle(memory.ptr).hex(), "count": counts[name]}
        buffers["stage"] = _map(files["stage"])
        return cls(buffers, keep), handles

    @classmethod
    def open(cls, handles: dict[str, Any]) -> "Arena":
        """In the runner: the judge's buffers, opened from their handles."""
        buffers: dict[str, torch.Tensor] = {}
        keep: list[Any] = []
        for name in (*NAMES, "stage"):
            entry = handles[name]
            if "path" in entry:  # the stage, or any buffer of the CPU self-test
                buffers[name] = _map(entry)
                continue
            import cupy

            ptr = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(entry["handle"]))
            keep.append(ptr)
            buffers[name] = _wrap(ptr, int(entry["count"]), None)
        return cls(buffers, keep)

    def views(self, batch: int, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(A, H, tau) for a (batch, n, n) call."""
        size = batch * n * n
        if size > self.buffers["a"].numel() or batch * n > self.buffers["tau"].numel():
            raise ValueError(f"a {batch}x{n} call does not fit the shared buffers")
        return (self.buffers["a"][:size].view(batch, n, n), self.buffers["h"][:size].view(batch, n, n),
                self.buffers["tau"][:batch * n].view(batch, n))

    def stage(self, batch: int, n: int) -> torch.Tensor:
        """The host view through which a primed (batch, n, n) call's input is handed over."""
        size = batch * n * n
        if size > self.buffers["stage"].numel():
            raise ValueError(f"a {batch}x{n} input does not fit the stage")
        return self.buffers["stage"][:size].view(batch, n, n)


def _map(entry: dict[str, Any]) -> torch.Tensor:
    """A float32 buffer in a file both processes map."""
    return torch.from_file(entry["path"], shared=True, size=max(1, int(entry["count"])), dtype=torch.float32)

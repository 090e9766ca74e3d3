"""Can a runner outlive its GPU lock without touching the GPU? A probe of the driver's checkpoint lock
(`cuCheckpointProcessLock`: blocks a process's CUDA calls and waits for the work it has queued) together with
SIGSTOP (stops its threads), on a child process that keeps the GPU busy (docs/benchmarks.md, "Throughput": the
candidate's warm-ups and compiles could leave the exclusive hold only if its code could wait between holds with
nothing of its own on the GPU).

    python bench/checkpoint_probe.py [--kernel-ms 50] [--hold-s 0.5]

The child loops: a spinning kernel of --kernel-ms (torch.cuda._sleep), a synchronisation, a line with a counter. The
probe then, each step timed: locks it (its queued kernel must finish first), stops it, watches for --hold-s that no
line comes, continues and unlocks it, watches the lines come back; then asks for a lock with a 500 ms limit while
the child runs one kernel of 3 s (the lock must fail and leave the process running). One JSON line; exit 2 where
there is no CUDA driver.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

CHILD = r"""
import sys, time, torch
kernel_ms = float(sys.argv[1])
x = torch.zeros(1, device="cuda")
torch.cuda._sleep(1000)
torch.cuda.synchronize()
start = time.perf_counter()
torch.cuda._sleep(1000000)
torch.cuda.synchronize()
cycles_per_ms = 1000000 / ((time.perf_counter() - start) * 1e3)
print("ready", flush=True)
n = 0
for line in iter(sys.stdin.readline, ""):
    if line.strip() == "long":
        torch.cuda._sleep(int(3000 * cycles_per_ms))
        torch.cuda.synchronize()
        print("long done", flush=True)
        continue
    while True:  # "loop": until the process is stopped or killed
        torch.cuda._sleep(int(kernel_ms * cycles_per_ms))
        torch.cuda.synchronize()
        n += 1
        print(n, flush=True)
"""


class LockArgs(ctypes.Structure):
    _fields_ = [("timeoutMs", ctypes.c_uint), ("reserved0", ctypes.c_uint), ("reserved1", ctypes.c_uint64 * 7)]


def driver() -> Any:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    if cuda.cuInit(0) != 0 or not hasattr(cuda, "cuCheckpointProcessLock"):
        return None
    return cuda


def state(cuda: Any, pid: int) -> int:
    value = ctypes.c_int(-1)
    cuda.cuCheckpointProcessGetState(pid, ctypes.byref(value))
    return value.value  # 0 running, 1 locked, 2 checkpointed, 3 failed (CUprocessState)


def lines_within(proc: subprocess.Popen[str], seconds: float) -> int:
    """How many lines the child printed within `seconds` (read unbuffered: nothing waits in a buffer unseen)."""
    assert proc.stdout is not None
    fd, count, end = proc.stdout.fileno(), 0, time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            count += chunk.count(b"\n")
    return count


def timed(call: Callable[[], int]) -> tuple[int, float]:
    """The driver call's result and its milliseconds."""
    began = time.perf_counter()
    result = call()
    return int(result), round((time.perf_counter() - began) * 1e3, 2)


@contextlib.contextmanager
def child(kernel_ms: float, command: str) -> Iterator[subprocess.Popen[str]]:
    """The child, ready (its clock of cycles measured), then told `command` (loop, or long); killed at the end."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(kernel_ms)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        yield proc
    finally:
        proc.kill()
        proc.wait()


def probe(cuda: Any, kernel_ms: float, hold_s: float) -> dict[str, Any]:
    with child(kernel_ms, "loop") as proc:
        found: dict[str, Any] = {"lines_before": lines_within(proc, 0.5)}
        args = LockArgs(timeoutMs=5000)
        found["lock_rc"], found["lock_ms"] = timed(lambda: cuda.cuCheckpointProcessLock(proc.pid, ctypes.byref(args)))
        found["state_locked"] = state(cuda, proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)
        found["lines_locked_and_stopped"] = lines_within(proc, hold_s)
        os.kill(proc.pid, signal.SIGCONT)
        found["unlock_rc"], found["unlock_ms"] = timed(lambda: cuda.cuCheckpointProcessUnlock(proc.pid, None))
        found["lines_after"] = lines_within(proc, 0.5)
    return found


def long_kernel_lock(cuda: Any) -> dict[str, Any]:
    with child(1.0, "long") as proc:
        time.sleep(0.2)
        args = LockArgs(timeoutMs=500)
        rc, ms = timed(lambda: cuda.cuCheckpointProcessLock(proc.pid, ctypes.byref(args)))
        return {"long_lock_rc": rc, "long_lock_ms": ms, "long_state": state(cuda, proc.pid)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--kernel-ms", type=float, default=50.0)
    parser.add_argument("--hold-s", type=float, default=0.5)
    args = parser.parse_args()
    cuda = driver()
    if cuda is None:
        print("checkpoint_probe: no CUDA driver with the checkpoint API here", file=sys.stderr)
        return 2
    print(json.dumps({**probe(cuda, args.kernel_ms, args.hold_s), **long_kernel_lock(cuda)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The GPU's lock (qrjudge/gpulock.py) on its own, on a CPU: PER_GPU evaluations that only hold it, each a thread
going through an evaluation's holds as qrjudge/sharing.py's `evaluate_sharing` takes them (shared: import and tests;
exclusive: hold and calibration; relaxed: the timed runner's import and warm-up; exclusive: the timed calls;
shared: the kept calls' checks), each hold a sleep of its measured length. What the lock's discipline alone does to
the rate: no GPU, no CPU contention, so the holds never lengthen. The defaults are run60's means on an H100
(`per_gpu = 2`: shared 3.59 s; exclusive 1.27, the hold's and the clock's calibration 0.19 before the relaxed 0.50 and
the timed calls 1.08 after it; the deferred checks 0.36; and, assumed, 0.6 s outside the lock).

    python bench/lock_sim.py [--per-gpu 1 2 3 4] [--seconds 20] [--scale 0.1] [--no-relax]

Prints, for each count, evaluations an hour (at the holds' real lengths) and how the lock was held over the run
(run_stages.py's `lock_states`, as it reads a real run's): exclusive, relaxed, shared by one, by two, by three or more,
free.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from qrjudge.gpulock import GpuLock  # noqa: E402
from run_stages import STATES, lock_states  # noqa: E402  (this script's directory is on sys.path)

HOLDS = {"outside": 0.6, "shared": 3.59, "calibrate": 0.19, "relaxed": 0.50, "timed": 1.08, "deferred": 0.36}


def evaluation(lock: GpuLock, holds: dict[str, float], scale: float, relax: bool = True) -> None:
    time.sleep(holds["outside"] * scale)
    with lock.shared():
        time.sleep(holds["shared"] * scale)
    with lock.exclusive() as held:
        time.sleep(holds["calibrate"] * scale)
        if relax:  # (without: the timed runner's import and warm-up exclusive too, as before the relaxed hold)
            held.relax()
        time.sleep(holds["relaxed"] * scale)
        if relax:
            held.tighten()
        time.sleep(holds["timed"] * scale)
    with lock.shared():
        time.sleep(holds["deferred"] * scale)


def simulate(per_gpu: int, seconds: float, scale: float, holds: dict[str, float] = HOLDS,
             relax: bool = True) -> dict[str, float]:
    """PER_GPU threads evaluating back to back for `seconds`: evaluations an hour at the holds' real lengths, and
    the share of the time the lock was held each way."""
    with tempfile.TemporaryDirectory() as directory:
        locks = [GpuLock(directory, "0") for _ in range(per_gpu)]
        stop, done = time.monotonic() + seconds, [0] * per_gpu

        def slot(i: int) -> None:
            while time.monotonic() < stop:
                evaluation(locks[i], holds, scale, relax)
                done[i] += 1

        began = time.monotonic()
        threads = [threading.Thread(target=slot, args=(i,)) for i in range(per_gpu)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ended = time.monotonic()
    spent = lock_states([span for lock in locks for span in lock.held], began, ended)
    return {"per_hour": sum(done) / ((ended - began) / scale) * 3600,
            **{state: seconds / (ended - began) for state, seconds in spent.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-gpu", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time of each count's run")
    parser.add_argument("--scale", type=float, default=0.1, help="a hold's sleep is its length times this")
    parser.add_argument("--no-relax", action="store_true", help="keep the timed runner's import and warm-up "
                        "exclusive (no reader let in between the two exclusive holds)")
    args = parser.parse_args()
    for n in args.per_gpu:
        r = simulate(n, args.seconds, args.scale, relax=not args.no_relax)
        held = ", ".join(f"{state} {100 * r[state]:.0f}%" for state in STATES if state in r)
        print(f"per_gpu {n}: {r['per_hour']:.0f} an hour; the lock {held}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

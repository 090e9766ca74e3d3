"""What a process's first CUDA use costs, with no other CUDA process on the GPU and beside one that holds a context:
where the driver's persistence mode is off, the last context's end lets the driver tear the GPU's state down and the
next process pays to bring it up again (a judge that is not prestarted, `evolve try`, a CI job's first step).

    python bench/cuda_start.py [--repeats 3]

Each start is a fresh `python -c` that imports torch, then makes its first tensor on the GPU; both are timed in the
child. One JSON line: the persistence mode nvidia-smi reports, then the starts alone and the starts beside a holder.
Exit 2 with one line where there is no NVIDIA driver.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from typing import Any

CHILD = r"""
import json, time
began = time.perf_counter()
import torch
imported = time.perf_counter()
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
print(json.dumps({"import_s": round(imported - began, 3), "cuda_s": round(time.perf_counter() - imported, 3)}))
"""
HOLDER = "import sys, torch; torch.zeros(1, device='cuda'); print('ready', flush=True); sys.stdin.read()"


def start() -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def persistence() -> str:
    out = subprocess.run(["nvidia-smi", "--query-gpu=persistence_mode", "--format=csv,noheader"], capture_output=True,
                         text=True, timeout=60)
    return out.stdout.strip() or out.stderr.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("cuda_start: no NVIDIA driver here", file=sys.stderr)
        return 2
    found: dict[str, Any] = {"persistence_mode": persistence(), "alone": [], "beside_a_holder": []}
    for _ in range(args.repeats):
        time.sleep(2.0)  # (the last child's context gone)
        found["alone"].append(start())
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        for _ in range(args.repeats):
            found["beside_a_holder"].append(start())
    finally:
        holder.kill()
        holder.wait()
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())

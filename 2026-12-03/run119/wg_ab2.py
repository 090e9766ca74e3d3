"""wg_update as this tree has it (its fragments by wg_fragments, shared with wg_apply: 157 registers, 1649 instructions a tile against 1602) against HEAD's
(b4b21c4's, 157 registers, measured in run118), alternating, ms a call (median of 20), and errors."""
import sys
from pathlib import Path

sys.path.insert(0, "bench")
import torch
from apply_probe import KERNEL, load, timed
from wgmma_probe import case, error

new, old = load(KERNEL), load(Path(".devrun/head/seed_kernels/tsqr_wy/kernel.py"))
for batch, m, N, w in [(640, 512, 448, 64), (640, 320, 256, 64), (60, 1024, 960, 64), (60, 512, 448, 64)]:
    V, Wn, C = case(batch, m, N, w, w)
    C0 = C.clone()
    line = [f"{batch}x({m}x{N}) w={w}:"]
    for name, k in (("new", new), ("old", old)):
        C.copy_(C0)
        k._wg_update(V, Wn, C, -1.0)
        torch.cuda.synchronize()
        line.append(f"{name} error {error(C, C0, V, Wn, -1.0):.1e}")
    for rep in range(2):
        for name, k in (("new", new), ("old", old)):
            line.append(f"{name} {timed(lambda: k._wg_update(V, Wn, C, 1.0)):.3f}")
    print(" ".join(line), flush=True)

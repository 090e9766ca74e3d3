"""Session 54's last change, for the next session: wg_update with V's values loaded together (.devrun/v_ahead:
`git archive b4b21c4 seed_kernels/tsqr_wy`, reverted on main until measured) against wg_update as the seed ships it
(this tree, as run117 measured it), alternating, on the seed's update shapes; ms a call (CUDA events, median of 20)
and each one's largest error against float64."""
import sys
from pathlib import Path

sys.path.insert(0, "bench")
import torch
from apply_probe import KERNEL, load, timed
from wgmma_probe import case, error

new, old = load(Path(".devrun/v_ahead/seed_kernels/tsqr_wy/kernel.py")), load(KERNEL)
for batch, m, N, w in [(640, 512, 448, 64), (640, 320, 256, 64), (640, 192, 128, 64), (60, 1024, 960, 64),
                       (60, 512, 448, 64)]:
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
    line.append(f"cuBLAS {timed(lambda: C.baddbmm_(V, Wn, alpha=-1.0)):.3f}")
    print(" ".join(line), flush=True)

"""Session 54: wg_update_piped against wg_update at 640x(512x448), w = 64 (and 60x(1024x960)): WG_STAGES 1, 2 and 3,
each with as many blocks an SM as its shared memory allows."""
import sys

sys.path.insert(0, "bench")
from apply_probe import load, timed
from wgmma_probe import case, route

k = load()
for shape in ((640, 512, 448, 64), (60, 1024, 960, 64), (640, 320, 256, 64)):
    V, Wn, C = case(*shape, 64)
    for stages in (1, 2, 3):
        route(k, (f"-DWG_STAGES={stages}",))
        k._WG_STAGES = stages
        k._WG_PIPED_SHARED = k._WG_SHARED + stages * 64 * 136 * 4
        k._WG["wg_update_piped"].max_dynamic_shared_size_bytes = k._WG_PIPED_SHARED
        print(f"{shape} WG_STAGES={stages}: piped {timed(lambda: k._wg_update(V, Wn, C, 1.0)):.3f} ms, "
              f"wg_update {timed(lambda: k._wg_update(V, Wn, C, 1.0, None, 'wg_update')):.3f}, "
              f"FP32 baddbmm {timed(lambda: C.baddbmm_(V, Wn, alpha=-1.0)):.3f}", flush=True)

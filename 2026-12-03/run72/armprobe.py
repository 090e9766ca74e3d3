# The disarming's parts on a GPU runner's libraries: what arm() spends (session 42).
import json, time
import torch, cupy, numpy  # noqa: F401  (as the runner has them before it arms)
from qrjudge import disarm, seal
torch.cuda.init(); o = torch.ones(1, 8, 8, device="cuda"); torch.bmm(o, o); torch.cuda.synchronize()
t = time.perf_counter(); disarm.prepare(); prep = time.perf_counter() - t
now = disarm.mappings()
t = time.perf_counter(); targets = disarm._addresses({p for _, _, _, p in now}); addr = time.perf_counter() - t
unread = sorted({p.name for _, _, _, p in now} - {p.name for p in disarm.STATE.read})
orig_seal, parts = seal.seal, {}
def timed_seal(written):
    t = time.perf_counter(); r = orig_seal(written); parts["seal_s"] = time.perf_counter() - t; return r
seal.seal = timed_seal
t = time.perf_counter(); note = disarm.arm(); total = time.perf_counter() - t
print(json.dumps({"prepare_s": round(prep, 3), "addresses_again_s": round(addr, 3), "arm_s": round(total, 3),
                  **{k: round(v, 3) for k, v in parts.items()}, "routines": len(targets),
                  "bytes": sum(n for _, n in targets.values()), "note": note, "loaded_after_prepare": unread[:20]}))

import json, sys, time, torch, numpy
from qrjudge import disarm
t = time.perf_counter(); disarm.prepare(); p = time.perf_counter() - t
t = time.perf_counter(); note = disarm.arm(); a = time.perf_counter() - t
t = time.perf_counter(); late = disarm.late(); l = time.perf_counter() - t
t = time.perf_counter(); v = disarm.verify(); w = time.perf_counter() - t
t = time.perf_counter()
for _ in range(1000): disarm.check()
c = (time.perf_counter() - t) / 1000
print(json.dumps({"prepare_ms": round(p*1e3,1), "arm_ms": round(a*1e3,1), "late_ms": round(l*1e3,2), "verify_ms": round(w*1e3,2), "check_us": round(c*1e6,2), "note": note}))

#!/usr/bin/env bash
# One GPU pass for a new seed (issue "contest-ready", must-show 1): ${SEED:-seed_kernels/tsqr_wy} screened in
# quick mode first (with a short stall limit: a kernel whose blocks wait for each other may hang), then, if it
# passed, torch.geqrf, blocked_wy and the seed in full mode from one run (seed 7), five noise repeats of the
# seed, its final mode, each of $variants below (constants of kernel.py, by bench/variant.py; constants joined by
# commas make one variant; by default: no cluster, no tf32x3_apply, every update by cuBLAS, no register panel) in
# full mode, and the profile of the seed per shape (bench/profile_blocked.py; SKIP_PROFILE=1 leaves it out).
# About 6 minutes on an H200. Results: ${OUT:-bench/out}/results.jsonl
# ({"name", "result"}), profile.txt, pass.log.
source "$(dirname "$0")/lib.sh"
seed=${SEED:-seed_kernels/tsqr_wy}
variants=${VARIANTS:-MB_CLUSTER=0 APPLY_ROWS=0 VTC_BELOW=0,TF32X3_BELOW=0,APPLY_ROWS=0 REG_ROWS=0}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
qr screen --kernel-dir "$seed" --mode quick --stall 30
if ! tail -1 "$OUT/results.jsonl" | grep -q '"status": "ok"'; then
  log "the seed failed its screen: nothing more"
  exit 1
fi
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
qr seed --kernel-dir "$seed" --mode full --seed 7
for i in 1 2 3 4 5; do qr "noise$i" --kernel-dir "$seed" --mode full; done
qr final --kernel-dir "$seed" --mode final --seed 7
for v in $variants; do
  qr "$v" --kernel-dir "$($py bench/variant.py "$seed" ${v//,/ })" --mode full --seed 7  # A=1,B=2: both
done
if [[ ${SKIP_PROFILE:-} == "" ]]; then
  log "profile of $seed"
  $py bench/profile_blocked.py "$seed" > "$OUT/profile.txt" 2>>"$OUT/harness.log"
fi
$py - "$OUT/results.jsonl" <<'PY' | tee -a "$OUT/pass.log"
# per shape: geqrf, blocked_wy, the seed (seed 7), with the speedups; then the noise repeats' CV
import json, statistics, sys
rows = {r["name"]: r["result"] for r in map(json.loads, open(sys.argv[1]))}
base, old, new = (rows.get(k, {}) for k in ("baseline", "blocked_wy", "seed"))
def shapes(r):
    return {s["shape"]: s["mean_us"] for s in r.get("shapes", [])}
b, o, s = shapes(base), shapes(old), shapes(new)
for shape, us in b.items():
    print(f"{shape:28} geqrf {us / 1e3:9.3f} ms  blocked_wy {o.get(shape, 0) / 1e3:8.3f} ms  "
          f"seed {s.get(shape, 0) / 1e3:8.3f} ms ({us / s[shape] if s.get(shape) else 0:.1f}x)")
if base.get("score") and new.get("score"):
    print(f"geomean: geqrf {base['score'] / 1e3:.3f} ms, blocked_wy {old.get('score', 0) / 1e3:.3f} ms, "
          f"seed {new['score'] / 1e3:.3f} ms ({base['score'] / new['score']:.1f}x geqrf)")
noise = [rows[f"noise{i}"]["score"] for i in range(1, 6) if rows.get(f"noise{i}", {}).get("score")]
if len(noise) > 1:
    print(f"noise: {noise}, CV {statistics.pstdev(noise) / statistics.fmean(noise):.2%}")
PY

#!/usr/bin/env bash
# Issue "a thousand judged candidates an hour", per_gpu's noise: tsqr_wy in `full` ROUNDS times alone and ROUNDS times
# while other evaluations share the GPU as `per_gpu = 2` runs them (every judge with EVOLVE_GPU_LOCKS: each timed
# region alone, the others' imports and tests beside the rest; here blocked_wy evaluated back to back), the rounds
# interleaved, the compile cache warm; then the mean and CV of each. Whether sharing changes a score beyond the
# noise decides per_gpu's default. NEIGHBOURS=N: N such loops at once (as `per_gpu = N + 1` shares the GPU).
# torch.geqrf first, in the same run. About 5 minutes on an H200.
# Results: ${OUT:-bench/out}/pass.log, results.jsonl (the shared ones with their `gpu_lock` record), harness.log.
source "$(dirname "$0")/lib.sh"
compile_cache_on
locks=$(mktemp -d)
stop=$locks/stop
neighbours() {  # blocked_wy judged again and again under the GPU's lock until $stop exists
  while [[ ! -e $stop ]]; do
    EVOLVE_GPU_LOCKS=$locks $py -m qrjudge --kernel-dir seed_kernels/blocked_wy --mode full > /dev/null 2>>"$OUT/harness.log"
  done
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/pass.log"
qr baseline --baseline --mode full --seed 7
qr warm_tsqr_wy --kernel-dir seed_kernels/tsqr_wy --mode full  # the cache filled, the GPU warm
qr warm_blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full
for i in $(seq 1 "${ROUNDS:-5}"); do
  qr "alone_$i" --kernel-dir seed_kernels/tsqr_wy --mode full
  rm -f "$stop"
  for _ in $(seq 1 "${NEIGHBOURS:-1}"); do neighbours & done
  export EVOLVE_GPU_LOCKS=$locks
  qr "shared_$i" --kernel-dir seed_kernels/tsqr_wy --mode full
  unset EVOLVE_GPU_LOCKS
  touch "$stop"
  wait
done
$py - "$OUT/results.jsonl" <<'PY' | tee -a "$OUT/pass.log"
import json, statistics, sys
sys.path.insert(0, "bench")
from run_stages import lock_spans
rows = {r["name"]: r["result"] for r in map(json.loads, open(sys.argv[1]))}
for kind in ("alone", "shared"):
    scores = [r["score"] for name, r in rows.items() if name.startswith(kind + "_") and r.get("score")]
    if len(scores) > 1:
        mean = statistics.fmean(scores)
        print(f"tsqr_wy {kind}: {len(scores)} scores {', '.join(f'{s:.1f}' for s in scores)} us; mean {mean:.1f}, "
              f"CV {100 * statistics.stdev(scores) / mean:.2f}%")
        print(f"   against torch.geqrf's {rows['baseline']['score']:.1f} us: {rows['baseline']['score'] / mean:.1f}x"
              if rows.get("baseline", {}).get("score") else "   (no torch.geqrf score)")
for name, r in rows.items():
    if name.startswith("shared_"):
        t = r.get("timings", {})
        held = lock_spans(r.get("gpu_lock"))
        print(f"{name}: lock waits {t.get('lock_wait_s')} s, held shared {held.get('shared_s', 0):.2f} s and exclusively "
              f"{held.get('exclusive_s', 0):.2f} s, deferred checks {t.get('deferred_checks_s')} s")
PY

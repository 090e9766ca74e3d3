#!/usr/bin/env bash
# The judge on a GPU after a change to its defences (issue "Judge v3", must-show 1): every planted cheat through the
# GPU tests (`pytest -m gpu -k cheat`), then torch.geqrf, blocked_wy and tsqr_wy (twice) in `full` mode in one run
# (seed 7 for the first of each), so that the seeds' scores compare with docs/benchmarks-history.md's and with each other,
# and the judge's clock per shape (`unexplained_us`) is recorded for honest kernels. About 9 minutes on an H200.
# CHEATS_K picks a part of them (a pytest -k expression); EVOLVE_GPU_LOCKS=DIR judges each as `per_gpu` > 1 does (a
# runner that tests, then one that is timed under the exclusive lock, its kept calls checked after).
# Results: ${OUT:-bench/out}/pass.log, results.jsonl, cheats.log.
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/pass.log"
compile_cache_on
log "pytest -m gpu -k \"${CHEATS_K:-cheat}\" (compile cache: ${EVOLVE_NVRTC_CACHE:-off}; GPU locks: ${EVOLVE_GPU_LOCKS:-none})"
timeout "${CHEATS_S:-400}" $py -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "${CHEATS_K:-cheat}" -rfE 2>&1 \
  | tail -40 | tee "$OUT/cheats.log" | tail -12 | tee -a "$OUT/pass.log"
[[ ${SEEDS:-1} == 0 ]] && exit 0  # (the seeds in one run with torch.geqrf: also bench/pipeline_pass.sh)
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
qr tsqr_wy --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
qr tsqr_wy_again --kernel-dir seed_kernels/tsqr_wy --mode full
$py - "$OUT/results.jsonl" <<'PY' | tee -a "$OUT/pass.log"
import json, sys
rows = {r["name"]: r["result"] for r in map(json.loads, open(sys.argv[1]))}
base = rows.get("baseline", {})
for name in ("blocked_wy", "tsqr_wy", "tsqr_wy_again"):
    r = rows.get(name, {})
    ratio = base.get("score", 0) / r["score"] if r.get("score") and base.get("score") else 0
    print(f"{name}: {r.get('status')} {r.get('score')} us ({ratio:.1f}x geqrf {base.get('score')} us); isolation: "
          f"{r.get('runner_isolation')}")
    for s in r.get("shapes", []):
        print(f"   {s['shape']:28} {s['mean_us']:10.1f} us  unexplained {s.get('unexplained_us'):8.1f} us  "
              f"judge overhead {s.get('judge_overhead_us'):8.1f} us")
PY

#!/usr/bin/env bash
# One GPU pass for the judge (issue "the judge cannot be gamed"): GPU tests (seeds, every planted cheat), the
# seed timed in-process as the contest's evaluator times it (bench/probe_timing.py), baseline and seeds in
# full mode from one run, noise (each repeat followed by the seed timed in one process, bench/loop_timing.py),
# the prestarted harness's overhead (WARM_REPEATS, 3, in full mode, each with its stages), final mode. VARIANTS="NAME=VALUE ..."
# adds VARIANT_REPEATS (2) full evaluations under each setting (e.g. EVOLVE_PRIME_BYTES=0), interleaved
# with the noise repeats. SKIP_TESTS=1, SKIP_PROBE=1 and SKIP_LOOP=1 leave out the GPU tests, the probe and the
# in-process loops; PYTEST_K="cheat or seed_full" selects GPU tests (one -k expression, spaces and all). About
# 7 minutes on an H200.
# Results: ${OUT:-bench/out}/results.jsonl (one JSON line per evaluation, {"name": ..., "result": ...});
# logs beside it. The sandbox's pass is bench/sandbox_pass.sh.
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
$py -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' | tee -a "$OUT/pass.log"
if [[ ${SKIP_TESTS:-} == "" ]]; then
  log "gpu tests, one at a time (timing checks need the GPU to themselves)"
  $py -m pytest -q -m gpu -p no:cacheprovider -s ${PYTEST_K:+-k "$PYTEST_K"} ${PYTEST_ARGS:-} tests/test_harness_gpu.py \
    >"$OUT/pytest.log" 2>&1
  tail -30 "$OUT/pytest.log" | tee -a "$OUT/pass.log"
fi
if [[ ${SKIP_PROBE:-} == "" ]]; then
  log "the seed timed in one process, as the old harness and the contest time it"
  $py bench/probe_timing.py --gaps > "$OUT/probe_timing.jsonl" 2>>"$OUT/harness.log"
fi
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
for i in 1 2 3 4 5; do
  qr "noise$i" --kernel-dir seed_kernels/blocked_wy --mode full
  if [[ ${SKIP_LOOP:-} == "" ]]; then
    log "the seed in one process, back to back (bench/loop_timing.py), repeat $i"
    $py bench/loop_timing.py >> "$OUT/loop_timing.jsonl" 2>>"$OUT/harness.log"
  fi
  for v in ${VARIANTS:-}; do  # A/B in the same run, interleaved with the noise repeats
    if (( i <= ${VARIANT_REPEATS:-2} )); then (export "$v"; qr "$v#$i" --kernel-dir seed_kernels/blocked_wy --mode full); fi
  done
done
for i in $(seq "${WARM_REPEATS:-3}"); do  # the overhead moves with the host: several, each with its stages
  prestarted "warm_full$i" --kernel-dir seed_kernels/blocked_wy --mode full
done
prestarted warm_quick --kernel-dir seed_kernels/blocked_wy --mode quick
qr final --kernel-dir seed_kernels/blocked_wy --mode final --seed 7
log "per evaluation: the host beside the score (a slow host shows in 20x32's judge overhead; hostwatch says why)"
$py bench/passes.py evaluations "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
log "where each prestarted evaluation's overhead went (seconds; the target is under 3 in full mode)"
$py bench/passes.py stages "$OUT/results.jsonl" | tee -a "$OUT/pass.log"

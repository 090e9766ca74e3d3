#!/usr/bin/env bash
# The rest of a pass the device time cut short: torch.geqrf and both seeds in `full` in one run (seed 7), the judge's
# clock against a misreporting runner, the hold's tests and the honest ones' scores, then the LLM pass bounded to RUN_S
# seconds. About 9 minutes on an H200.
source "$(dirname "$0")/lib.sh"
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
qr tsqr_wy --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
log "pytest -m gpu: the judge's clock, the hold, the honest ones"
timeout 260 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -rfE \
  -k "misreporting or nothing_runs_beside or flush_overlap_gains or honest_ones" 2>&1 | tail -12 | tee -a "$OUT/pass.log"
RUN_S=${RUN_S:-170} bash "$(dirname "$0")/llm_pass.sh"

#!/bin/bash
# For the next session (after session 51, which got no GPU): wgmma.cu's first GPU pass, then judge 12 in full.
# 1. job71: bench/wgmma_probe.py (compile route, errors on edge shapes, times against cuBLAS and tf32x3), the judge's
#    `full` on the seed and WG_FROM=48 alternating twice, and job70 (after_done under judges 12 and 11): ~330 s.
# 2. lane_qr_ahead against lane_qr (bench/small_probe.py, 20x32, held as the judge holds): ~20 s; wgmma's GPU tests (float64 comparison; quick mode with WG_FROM=1): ~60 s.
# 3. job72: every planted cheat's GPU test with two workers and the GPU lock, the export's GPU test: ~300 s.
# Any Hopper (H100 or H200). Carry .whl and .devrun (.devrun/ab_old: judge 11's qrjudge,
# `git archive c27d95c qrjudge | tar -x -C .devrun/ab_old`). Two calls: `bash .devrun/next.sh 1` then `... 2`.
cd "$(dirname "$0")/.."
if [[ ${1:-1} == 1 ]]; then
  bash .devrun/job71c.sh
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
  PYTHONPATH=$PWD:/tmp/site timeout 60 python3 bench/small_probe.py --vary LANE_QR=1,2 --calls 100 2>&1 \
    | tee $OUT/lane_probe.txt | tail -14
  PYTHONPATH=$PWD:/tmp/site timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py \
    -k "wgmma or WG_FROM or LANE_QR" 2>&1 | tee $OUT/wgmma_gpu_tests.txt | tail -4
  bash .devrun/job70.sh
else
  bash .devrun/job72.sh
fi

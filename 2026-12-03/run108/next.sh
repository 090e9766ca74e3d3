#!/bin/bash
# For the next session (after session 50): judge 12 on a GPU in full: after_done (fixed since run108) under judge 12
# and judge 11 (job70, about 90 s), then every planted cheat's GPU test with two workers and the GPU lock (about 250 s),
# then the exported file's GPU test (about 60 s). Any GPU. Carry .whl and .devrun (.devrun/ab_old: judge 11's qrjudge,
# `git archive c27d95c qrjudge | tar -x -C .devrun/ab_old`).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
bash .devrun/job70.sh
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
s=$(date +%s)
EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 330 python3 -m pytest -q -m "gpu and not alone" -n 2 -p no:cacheprovider \
  tests/test_harness_gpu.py > $OUT/cheats_all.txt 2>&1
echo "GPU cheats rc $? $(( $(date +%s) - s )) s"; tail -6 $OUT/cheats_all.txt
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_export.py 2>&1 | tee $OUT/export_gpu_test.txt | tail -3

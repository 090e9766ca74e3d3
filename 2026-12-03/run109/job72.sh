#!/bin/bash
# Session 51: every planted cheat's GPU test with two workers and the GPU lock (about 250 s), then the exported
# file's GPU test (about 60 s): next.sh less job70.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
s=$(date +%s)
EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 330 python3 -m pytest -q -m "gpu and not alone" -n 2 -p no:cacheprovider \
  tests/test_harness_gpu.py > $OUT/cheats_all.txt 2>&1
echo "GPU cheats rc $? $(( $(date +%s) - s )) s"; tail -8 $OUT/cheats_all.txt
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_export.py 2>&1 | tee $OUT/export_gpu_test.txt | tail -3

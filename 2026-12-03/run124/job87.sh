#!/bin/bash
# Session 59, the last of its device time: the GPU tests whose parameters changed with RP_TILE = 1 (reg_panel as the
# other path now; tile_cluster clustered at every batch).
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s)
timeout ${TESTS_S:-150} python3 -m pytest -v -m gpu -p no:cacheprovider tests/test_harness_gpu.py \
  -k "RP_TILE or (quick and CLUSTER_FROM and not REG_CLUSTER and not LOOKAHEAD and not COL_CLUSTER and not WG and not OUTER)" > $OUT/gpu_tests.txt 2>&1
echo "pytest rc $? $(( $(date +%s) - s )) s"; grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" $OUT/gpu_tests.txt | cut -c1-150

#!/bin/bash
# Session 54 (issue #33 pts 1-2): seed_pass on the seed with WG_FROM = 48 (geqrf, blocked_wy, the seed, five repeats,
# final) and the seed before it (WG_FROM=0) in the same run; wgmma's and the export's GPU tests; then the climb from
# WG_FROM=0 (bench/climb/steps.txt: one step). ~8 min; carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
s=$(date +%s)
OUT=$OUT/seed VARIANTS="WG_FROM=0" SKIP_PROFILE=1 timeout 250 bash bench/seed_pass.sh > $OUT/seed_pass.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s"; tail -16 $OUT/seed/pass.log | cut -c1-160
grep -o '"WG_FROM=0: {"status": "[a-z_]*", "score": [0-9.]*' $OUT/seed/pass.log; grep 'WG_FROM=0:' $OUT/seed/pass.log | cut -c1-80
s=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py tests/test_export.py \
  -k "wgmma or WG_FROM or exported" 2>&1 | tail -4
echo "tests $(( $(date +%s) - s )) s"
s=$(date +%s)
OUT=$OUT/climb START="WG_FROM=0" STEPS=bench/climb/steps.txt timeout 240 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -20 $OUT/climb/pass.log
tar -czf $OUT/seed_climb.tgz -C $OUT seed climb && rm -rf $OUT/seed $OUT/climb

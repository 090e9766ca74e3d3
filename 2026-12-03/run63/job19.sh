#!/bin/bash
# session 39's device job (background; collect with .devrun/collect.sh SECONDS doneN), most needed first:
# 1 bench/apply_probe.py: the staged split-TF32 pair against cuBLAS, tf32x3_apply and tf32x3_vtc+update, and alone
# 2 bench/seed_pass.sh: geqrf, blocked_wy, the seed (STAGED_FROM = 256) with 5 repeats and final; variants
#   STAGED_FROM=0 (the seed before), 16, 1, STAGED_ROWS=128
# 3 the climb: STAGED_FROM=256 from START=STAGED_FROM=0 (evolve try, add)
# 4 on an H200 only: the README's command, the tree before issue #35 (100 s) and this tree twice to its end
# 5 the judging GPU tests as bench/ci_gpu.sh runs them
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu $gpu" >> $R/status
s=$(date +%s); timeout 300 python3 bench/apply_probe.py > $R/apply_probe.out 2>&1
echo "apply_probe rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
s=$(date +%s); OUT=$R/seed VARIANTS="STAGED_FROM=0 STAGED_FROM=16 STAGED_FROM=1 STAGED_ROWS=128" SKIP_PROFILE=1 \
  timeout 700 bash bench/seed_pass.sh > $R/seed_pass.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -25 $R/seed/pass.log >> $R/status; touch $R/done2
s=$(date +%s); OUT=$R/climb STEPS=bench/climb/steps.txt START="STAGED_FROM=0" timeout 400 bash bench/climb_pass.sh > $R/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s" >> $R/status; cat $R/climb/lineage.txt >> $R/status 2>/dev/null; touch $R/done3
if [[ $gpu == *H200* ]]; then
  s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 AFTER_RUNS=2 SEEDS=0 \
    bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
  echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -12 $R/pipe/pass.log >> $R/status
fi
touch $R/done4
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 400 python3 -m pytest -q -rs -m "gpu and not alone" -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -2 $R/gputests.out >> $R/status; touch $R/done5

#!/bin/bash
# session 37's device job (run in the background, collect with .devrun/collect.sh SECONDS doneN), most needed first:
# 1 the README's command: before the issue's work (0c70fdb) for 100 s, then this tree to its end with per_gpu = 2
#   (shipped) and right after it with per_gpu = 3 (each at most 230 s, the cache emptied before each), then the seeds
# 2 the seed's score alone against shared with two neighbours (per_gpu = 3's noise), ROUNDS=2
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1; git log --oneline -1 >> $R/status
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 PER_GPU=3 SEEDS=1 \
  bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
s=$(date +%s); OUT=$R/noise NEIGHBOURS=2 ROUNDS=2 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "share_noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2

#!/bin/bash
# session 39's third device job (issue #35 pts 1-2, on whatever GPU comes): the README's command, the tree before
# the issue (0c70fdb) for 100 s and this tree twice to its end, the cache emptied before each; then geqrf and the
# seed five times in full (SEEDS=1)
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu $gpu" >> $R/status
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 AFTER_RUNS=2 SEEDS=1 \
  bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -30 $R/pipe/pass.log >> $R/status; touch $R/done1

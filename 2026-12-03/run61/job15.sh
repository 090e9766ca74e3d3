#!/bin/bash
# session 38's device job (run in the background, collect with .devrun/collect.sh SECONDS doneN), most needed first:
# 1 the README's command: before the issue's work (0c70fdb) for 100 s, then this tree to its end (per_gpu = 2, shipped;
#   runners set up before the go line, the profile without torch's compiler), the cache emptied before each; the seeds
# 2 the judging GPU tests (the judge changed): the planted cheats' statuses
# 3 the tree before this session's change (af0bc1f) and this tree again, each to its end: the change's own pair
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1; git log --oneline -1 >> $R/status
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 SEEDS=1 \
  bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
s=$(date +%s); timeout 420 python3 -m pytest -q -p no:cacheprovider -m "gpu and not alone" -n 2 tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -3 $R/gputests.out >> $R/status; touch $R/done2
s=$(date +%s); OUT=$R/pipe2 BEFORE= PREVIOUS=.devrun/previous.tar AFTER_S=230 SEEDS=0 \
  bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3

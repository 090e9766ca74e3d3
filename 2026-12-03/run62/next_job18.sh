#!/bin/bash
# For the next session with an H200 (issue #35 pt 1 and 2), most needed first; about 17 minutes:
# 1 the README's command: before the issue's work (0c70fdb, .devrun/issue_before.tar) for 100 s, then the tree
#   three times to its end (AFTER_RUNS=3: a whole run is one draw of NVRTC compiles, 6-22 in run62, which moved its rate
#   20%), the cache emptied before each; then torch.geqrf and the seed five times in `full`
# 2 the judging GPU tests as bench/ci_gpu.sh runs them (the lock shared)
# Run it in the background and collect at once, call after call (a machine idle 30 s between calls goes back):
#   (nohup setsid bash .devrun/job18.sh > /tmp/job.log 2>&1 &); sleep 5; bash .devrun/collect.sh 560 done1
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 AFTER_RUNS=3 SEEDS=1 \
  bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 400 python3 -m pytest -q -rs -m "gpu and not alone" -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -2 $R/gputests.out >> $R/status; touch $R/done2

#!/bin/bash
# session 36's device job (run in the background, collect with .devrun/collect.sh SECONDS doneN), most needed first:
# 1 the README's command: before the issue's work (0c70fdb) for 100 s, then this tree to its end (per_gpu = 2, shipped;
#   at most 230 s), then the seeds (torch.geqrf, blocked_wy, tsqr_wy x5)
# 2 the judging GPU tests, two workers, as ci_gpu.sh runs them (the planted cheats, qr_out_overload and lapack_ffi new)
# 3 this tree again with per_gpu = 2, then with 3 (pipe2/)
# 4 the seed's score alone against shared with two neighbours (per_gpu = 3's noise), ROUNDS=2
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1; git log --oneline -1 >> $R/status
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=230 SEEDS=1 \
  bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
(source bench/lib.sh > /dev/null 2>&1; compile_cache_on; s=$(date +%s)
 EVOLVE_GPU_LOCKS=$(mktemp -d) python3 -m pytest -q -rs -m "gpu and not alone" -n 2 -p no:cacheprovider \
   tests/test_harness_gpu.py > $R/harness_gpu.log 2>&1
 echo "harness_gpu rc $? $(( $(date +%s) - s )) s" >> $R/status); touch $R/done2
s=$(date +%s); OUT=$R/pipe2 BEFORE= PER_GPU=3 AFTER_S=230 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3
s=$(date +%s); OUT=$R/noise NEIGHBOURS=2 ROUNDS=2 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "share_noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done4

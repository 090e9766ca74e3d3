#!/bin/bash
# next session's device job (session 34 wrote it; run in the background, collect with .devrun/collect.sh SECONDS doneN,
# keeping a collecting `run` call in flight the whole time):
# 1 the planted cheats and the other judging GPU tests, two workers, as ci_gpu.sh runs them (the profile's compiler
#   import, the set-up's parts and contexts_s first run on a GPU here)
# 2 the README's command, this tree three times to its end (AFTER_RUNS=3, at most 240 s each), then the seeds
#   (torch.geqrf, blocked_wy, tsqr_wy x5): #35's goal over several draws, the confirmation without its 4 s profile
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1; git log --oneline -1 >> $R/status
(source bench/lib.sh > /dev/null 2>&1; compile_cache_on; s=$(date +%s)
 EVOLVE_GPU_LOCKS=$(mktemp -d) python3 -m pytest -q -rs -m "gpu and not alone" -n 2 -p no:cacheprovider \
   tests/test_harness_gpu.py > $R/harness_gpu.log 2>&1
 echo "harness_gpu rc $? $(( $(date +%s) - s )) s" >> $R/status); touch $R/done1
s=$(date +%s); OUT=$R/pipe BEFORE= AFTER_RUNS=3 AFTER_S=240 SEEDS=1 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2

#!/bin/bash
# For the next session (issue #35 pt 1 names the H200): the README's command, the tree before the issue (0c70fdb)
# for 100 s, this tree twice to its 50 candidates, then the seeds (geqrf, tsqr_wy five times) in the same call;
# only on an H200 (on an H100 it says so and stops: run68 has the H100's figures). About 480 s; one call:
#   bash .devrun/job25.sh   (carry .whl and .devrun; results under $OUT/pipe)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
[[ $gpu == *H200* ]] || { echo "not an H200: nothing run"; exit 0; }
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
s=$(date +%s)
OUT=$OUT/pipe BEFORE=.devrun/issue_before.tar RUN_S=${RUN_S:-100} AFTER_S=${AFTER_S:-200} AFTER_RUNS=${AFTER_RUNS:-2} SEEDS=1 timeout ${LIMIT:-540} \
  bash bench/pipeline_pass.sh > $OUT/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s"
grep -E "^== |results in|past the first|tsqr_wy x5" $OUT/pipe/pass.log | head -30
tar -czf $OUT/pipe.tgz -C $OUT pipe && rm -rf $OUT/pipe

#!/bin/bash
# For the next session (issue #33 pts 1-2, on an H200): the seed with chunk_tw against torch.geqrf and the seed before
# it (CHUNK_TW=0, a variant), five repeats and final (bench/seed_pass.sh), then the climb's step (evolve try / add from
# START="CHUNK_TW=0", bench/climb/steps.txt). About 8 minutes; carry .whl and .devrun; results under $OUT.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
s=$(date +%s)
OUT=$OUT/seed VARIANTS="CHUNK_TW=0" SKIP_PROFILE=1 timeout 330 bash bench/seed_pass.sh > $OUT/seed_pass.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s"; grep -E "score|ok" $OUT/seed/pass.log | tail -14
s=$(date +%s)
OUT=$OUT/climb START="CHUNK_TW=0" STEPS=bench/climb/steps.txt timeout 240 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -20 $OUT/climb/pass.log
# at most 8 files come back: the per-run directories as one tgz
tar -czf $OUT/seed_climb.tgz -C $OUT seed climb && rm -rf $OUT/seed $OUT/climb

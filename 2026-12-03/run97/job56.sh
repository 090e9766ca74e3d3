#!/bin/bash
# Session 46 (issue #33 pts 1-2): the seed with OUTER_AHEAD, OUTER_FROM 48 and 60x1024 graphed against torch.geqrf and
# the seed before them (c078b1f, a variant), five repeats and final, then the climb from the seed before chunk_tw (two
# steps, bench/climb/steps.txt). About 5 minutes on an H100; carry .whl and .devrun; results under $OUT (one tgz).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
s=$(date +%s)
OUT=$OUT/seed VARIANTS="OUTER_AHEAD=0,OUTER_FROM=256,GRAPH_BYTES=134217728" SKIP_PROFILE=1 timeout 330 bash bench/seed_pass.sh > $OUT/seed_pass.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s"; tail -16 $OUT/seed/pass.log | cut -c1-160
s=$(date +%s)
OUT=$OUT/climb START="CHUNK_TW=0 OUTER_AHEAD=0 OUTER_FROM=256 GRAPH_BYTES=134217728" STEPS=bench/climb/steps.txt timeout 300 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -20 $OUT/climb/pass.log
# at most 8 files come back: the per-run directories as one tgz
tar -czf $OUT/seed_climb.tgz -C $OUT seed climb && rm -rf $OUT/seed $OUT/climb

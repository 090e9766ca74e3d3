#!/bin/bash
# For a later session (issue #33), on any GPU: the outer look-ahead where it is not used yet. small_probe on 40x352
# (outer blocks from 16 matrices; they lost 14% there without the look-ahead), 8x2048 and 2x4096 (outer blocks from one
# matrix, with their multi-block panels, in place of the panel look-ahead), each against the seed as it ships; then
# the seed exported (bench/export_pass.sh: its file judged against its directory, twice). About 5 minutes; carry .whl and .devrun; results under $OUT (one tgz).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
for shape in "40 352" "8 2048" "2 4096"; do
  s=$(date +%s); name=probe_${shape// /x}
  timeout 150 python3 bench/small_probe.py $shape --calls 15 --loop 2 \
    --vary "OUTER_FROM=48;OUTER_FROM=1;OUTER_FROM=1,OUTER_AHEAD=0" > $R/$name.txt 2>&1
  echo "$name rc $? $(( $(date +%s) - s )) s"; grep -E "single|host|against" $R/$name.txt
done
s=$(date +%s)  # 640x512: every update by tf32x3_apply (one kernel), or only those within a block (INNER_APPLY), against cuBLAS
timeout 100 python3 bench/small_probe.py 640 512 --calls 10 --loop 2 --vary "APPLY_BELOW=256;APPLY_BELOW=1024;INNER_APPLY=1" \
  > $R/probe_640x512.txt 2>&1
echo "probe_640x512 rc $? $(( $(date +%s) - s )) s"; grep -E "single|against" $R/probe_640x512.txt
s=$(date +%s)  # issue #33 pt 3, the export half: the seed as it ships exported and judged against its directory form
OUT=$R/export SEEDS=seed_kernels/tsqr_wy REPEATS=2 timeout 300 bash bench/export_pass.sh > $R/export.out 2>&1
echo "export rc $? $(( $(date +%s) - s )) s"; cat $R/export/pass.log | cut -c1-160
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

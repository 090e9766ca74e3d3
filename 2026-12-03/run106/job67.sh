#!/bin/bash
# For the next session (#33), on any GPU: LOOKAHEAD2 (the look-ahead two panels deep: the rest's update by panel
# p - 1 and panel p's V^T C in one pass over C by tf32x3_update_vtc, where the seed reads C twice and writes it once
# a panel) against the seed: its GPU test (quick), small_probe on 2x4096 and 8x2048 (one process each, --vary), the
# bench/timeline.py on 2x4096 with and without it, the judge in `full` alternating twice and LOOKAHEAD2=1 in `final`.
# About 6 minutes; carry .whl, .devrun. In order of worth (what a cut-off call leaves under $OUT/r comes back).
t0=$(date +%s); gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "LOOKAHEAD2" > $R/gpu_test.txt 2>&1
echo "gpu test rc $?"; tail -3 $R/gpu_test.txt
two=$(python3 bench/variant.py seed_kernels/tsqr_wy LOOKAHEAD2=1)
(
  export OUT=$R/judge
  source bench/lib.sh
  for i in 1 2; do
    qr seed$i --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
    qr two$i --kernel-dir "$two" --mode full --seed 7
  done
  qr two_final --kernel-dir "$two" --mode final --seed 7
  $py bench/passes.py shapes "$OUT/results.jsonl" > "$OUT/shapes.txt" 2>&1
) > $R/judge.out 2>&1
grep -E "^(seed|two)" $R/judge/pass.log | cut -c1-110; head -16 $R/judge/shapes.txt
for shape in "2 4096" "8 2048"; do
  timeout 120 python3 bench/small_probe.py $shape --calls 15 --loop 2 --vary "LOOKAHEAD2=0,1" > $R/probe_${shape// /x}.txt 2>&1
  echo "probe $shape rc $?"; grep -E "single|against" $R/probe_${shape// /x}.txt
done
for v in 0 1; do  # where a call's time goes, kernel by kernel (the rest's update beside the panels), if time is left
  (( $(date +%s) - t0 < 400 )) || break
  timeout 90 python3 bench/timeline.py 2 4096 LOOKAHEAD2=$v > $R/timeline_$v.txt 2>&1; echo "timeline $v rc $?"
  tail -6 $R/timeline_$v.txt | cut -c1-200
done
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

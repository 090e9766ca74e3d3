#!/bin/bash
# Session 47 (issue #33): hr_cluster (CholeskyQR2 + Householder reconstruction, HR_PANEL = 1) on the clustered
# panels of 8x2048 and 2x4096, against the seed as it ships (HR_PANEL = 0): small_probe side by side, then the judge
# in `full` (seed 7) twice each way, interleaved, and the variant in `final` (the ill cases at 2 x 1024 and 16 x 176
# hidden in mixed batches: the fallback to reg_cluster on the GPU). About 6 minutes; carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
for shape in "8 2048" "2 4096"; do
  s=$(date +%s); name=probe_${shape// /x}
  timeout 120 python3 bench/small_probe.py $shape --calls 15 --loop 2 --vary "HR_PANEL=1" > $R/$name.txt 2>&1
  echo "$name rc $? $(( $(date +%s) - s )) s"; grep -E "single|host|against|wrong|Error" $R/$name.txt | head -8
done
s=$(date +%s)
hr=$(python3 bench/variant.py seed_kernels/tsqr_wy HR_PANEL=1)
(
  export OUT=$R/judge
  source bench/lib.sh
  qr seed0 --kernel-dir seed_kernels/tsqr_wy --mode quick
  qr hr0 --kernel-dir "$hr" --mode quick
  for i in 1 2; do
    qr seed$i --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
    qr hr$i --kernel-dir "$hr" --mode full --seed 7
  done
  qr hr_final --kernel-dir "$hr" --mode final --seed 7
  $py bench/passes.py shapes "$OUT/results.jsonl" > "$OUT/shapes.txt" 2>&1
) > $R/judge.out 2>&1
echo "judge rc $? $(( $(date +%s) - s )) s"
grep -E "^(seed|hr)" $R/judge/pass.log | cut -c1-200
head -40 $R/judge/shapes.txt
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

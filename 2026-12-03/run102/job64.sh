#!/bin/bash
# Session 47 (#33): reg_panel's tau stored after the loop against the seed before it (bb0bca4's seed,
# .devrun/seed_before.tar), the judge in `full` (seed 7) alternating, twice each (about 2.5 minutes; its logs as
# r.tgz at once), then bench/cluster_trace.py on 2x4096 for both (each line written as it comes).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R /tmp/before && tar -xf .devrun/seed_before.tar -C /tmp/before
old=/tmp/before/seed_kernels/tsqr_wy
s=$(date +%s)
(
  export OUT=$R/judge
  source bench/lib.sh
  for i in 1 2; do
    qr old$i --kernel-dir $old --mode full --seed 7
    qr new$i --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
  done
  $py bench/passes.py shapes "$OUT/results.jsonl" > "$OUT/shapes.txt" 2>&1
) > $R/judge.out 2>&1
echo "judge rc $? $(( $(date +%s) - s )) s"
grep -E "^(old|new)" $R/judge/pass.log | cut -c1-110
head -16 $R/judge/shapes.txt
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
timeout 60 python3 bench/cluster_trace.py 2 4096 > $OUT/trace_new.txt 2>&1; echo "trace new rc $?"; cut -c1-330 $OUT/trace_new.txt
timeout 60 python3 bench/cluster_trace.py 2 4096 --seed $old > $OUT/trace_old.txt 2>&1; echo "trace old rc $?"; cut -c1-330 $OUT/trace_old.txt

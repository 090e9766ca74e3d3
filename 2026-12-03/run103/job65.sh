#!/bin/bash
# For the next session (#33), on any GPU: CLUSTER_MBAR (reg_cluster's sums by st.async and mbarriers, no cluster
# barrier a column) against the seed: small_probe on 2x4096 and 8x2048 (its |R| check first), cluster_trace on both
# trees, then the judge in `full` alternating twice and CLUSTER_MBAR=1 in `final`. About 4 minutes; carry .whl, .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
mb=$(python3 bench/variant.py seed_kernels/tsqr_wy CLUSTER_MBAR=1)
# (a process each: CLUSTER_MBAR is compiled into reg_panel.cu's module, made once at import, so small_probe's --vary
# alone would time one binary twice; each --vary below only labels its line)
for shape in "2 4096" "8 2048"; do
  for kernel in seed_kernels/tsqr_wy $mb seed_kernels/tsqr_wy $mb; do
    label=CLUSTER_MBAR=$([[ $kernel == $mb ]] && echo 1 || echo 0)
    timeout 60 python3 bench/small_probe.py $shape --calls 15 --loop 2 --kernel $kernel/kernel.py --vary "$label" \
      >> $R/probe_${shape// /x}.txt 2>&1
  done
  echo "probe $shape"; grep -E "single|against" $R/probe_${shape// /x}.txt
done
timeout 90 python3 bench/cluster_trace.py 2 4096 --seed $mb > $R/trace_mbar.txt 2>&1; cut -c1-330 $R/trace_mbar.txt
timeout 90 python3 bench/cluster_trace.py 2 4096 > $R/trace_seed.txt 2>&1; cut -c1-330 $R/trace_seed.txt
(
  export OUT=$R/judge
  source bench/lib.sh
  for i in 1 2; do
    qr seed$i --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
    qr mbar$i --kernel-dir "$mb" --mode full --seed 7
  done
  qr mbar_final --kernel-dir "$mb" --mode final --seed 7
  $py bench/passes.py shapes "$OUT/results.jsonl" > "$OUT/shapes.txt" 2>&1
) > $R/judge.out 2>&1
grep -E "^(seed|mbar)" $R/judge/pass.log | cut -c1-110; head -16 $R/judge/shapes.txt
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

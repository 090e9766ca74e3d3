#!/bin/bash
# Session 46 (issue #33): 60x1024 in outer blocks with the look-ahead, graphed or not (small_probe, the host's time
# a call shown: ungraphed it was paced by Python in job54), the seed in `full` against the best of them, twice, then
# the climb's step (chunk_tw and OUTER_AHEAD as one step from the seed before both). About 4 minutes on an H100.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
s=$(date +%s)
timeout 120 python3 bench/small_probe.py 60 1024 --calls 15 --loop 2 --vary \
  "OUTER_FROM=256;OUTER_FROM=48;OUTER_FROM=48,GRAPH_BYTES=268435456;OUTER_FROM=256,GRAPH_BYTES=268435456" \
  > $R/probe60.txt 2>&1
echo "probe60 rc $? $(( $(date +%s) - s )) s"; grep -E "single|host|against" $R/probe60.txt
s=$(date +%s)
OUT=$R/ab bash -c 'source bench/lib.sh
  for v in seed "OUTER_FROM=48 GRAPH_BYTES=268435456" "GRAPH_BYTES=268435456" seed "OUTER_FROM=48 GRAPH_BYTES=268435456" \
      "GRAPH_BYTES=268435456"; do
    dir=seed_kernels/tsqr_wy; [[ $v == seed ]] || dir=$(python3 bench/variant.py seed_kernels/tsqr_wy $v)
    qr "${v// /,}" --kernel-dir $dir --mode full --seed 7
  done' > $R/ab.out 2>&1
echo "ab rc $? $(( $(date +%s) - s )) s"
python3 - $R/ab/results.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    sh = {s["shape"]: s["median_us"] for s in r["result"].get("shapes", [])}
    print(r["name"], r["result"].get("score"), r["result"].get("status"),
          {k: v for k, v in sh.items() if k.startswith(("640", "60x", "40x352"))})
PY
s=$(date +%s)
OUT=$R/climb START="CHUNK_TW=0 OUTER_AHEAD=0" STEPS=bench/climb/steps.txt timeout 240 bash bench/climb_pass.sh > $R/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -12 $R/climb/pass.log
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

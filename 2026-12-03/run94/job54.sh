#!/bin/bash
# Session 46 (issue #33): OUTER_AHEAD, a block of look-ahead for the outer blocks (640x512): small_probe on 640x512 and
# 60x1024 with its variants, the timeline of one 640x512 call each way, then the seed in `full` against OUTER_AHEAD=0,
# alternating, twice. About 4 minutes on an H100; carry .whl and .devrun; results under $OUT (one tgz).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
s=$(date +%s)
timeout 120 python3 bench/small_probe.py 640 512 --calls 15 --loop 2 \
  --vary "OUTER_AHEAD=1;OUTER_AHEAD=0;OUTER_AHEAD=1,OUTER_NB=128;OUTER_AHEAD=0,OUTER_NB=128;OUTER_AHEAD=1,OUTER_NB=96" \
  > $R/probe640.txt 2>&1
echo "probe640 rc $? $(( $(date +%s) - s )) s"; grep -E "single|against" $R/probe640.txt
s=$(date +%s)
timeout 90 python3 bench/small_probe.py 60 1024 --calls 15 --loop 2 \
  --vary "OUTER_FROM=256;OUTER_FROM=48,OUTER_AHEAD=1;OUTER_FROM=48,OUTER_AHEAD=0" > $R/probe60.txt 2>&1
echo "probe60 rc $? $(( $(date +%s) - s )) s"; grep -E "single" $R/probe60.txt
for v in 1 0; do
  timeout 60 python3 bench/timeline.py 640 512 OUTER_AHEAD=$v --steps 4 > $R/timeline640_$v.txt 2>&1
  echo "timeline OUTER_AHEAD=$v rc $?"; head -12 $R/timeline640_$v.txt
done
s=$(date +%s)
OUT=$R/ab bash -c 'source bench/lib.sh
  for v in seed OUTER_AHEAD=0 seed OUTER_AHEAD=0; do
    dir=seed_kernels/tsqr_wy; [[ $v == seed ]] || dir=$(python3 bench/variant.py seed_kernels/tsqr_wy $v)
    qr $v --kernel-dir $dir --mode full --seed 7
  done' > $R/ab.out 2>&1
echo "ab rc $? $(( $(date +%s) - s )) s"; grep -h "score" $R/ab/pass.log | cut -c1-100
python3 - $R/ab/results.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    sh = {s["shape"]: s["median_us"] for s in r["result"].get("shapes", [])}
    print(r["name"], r["result"].get("score"), {k: v for k, v in sh.items() if k.startswith(("640", "60x"))})
PY
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R

#!/bin/bash
# Session 53: the lean pass for a short lease: the wgmma probe, lane_qr_ahead against lane_qr (small_probe, held),
# then, if the probe timed and ${BUDGET:-300} s allow, the judge's `full` on WG_FROM=48 and the seed (once each).
cd "$(dirname "$0")/.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 60 python3 bench/small_probe.py --vary LANE_QR=1,2 --calls 100 > $OUT/lane_probe.txt 2>&1; echo "lane probe rc $?"
tail -12 $OUT/lane_probe.txt
timeout 150 python3 bench/wgmma_probe.py > $OUT/wgmma_probe.txt 2>&1; echo "wgmma probe rc $? $(( $(date +%s) - t0 )) s"
tail -40 $OUT/wgmma_probe.txt
if grep -q "^640x(512x448)" $OUT/wgmma_probe.txt; then
  v=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48)
  i=0
  for k in $v seed_kernels/tsqr_wy; do
    left=$(( ${BUDGET:-300} - ($(date +%s) - t0) )); (( left < 60 )) && { echo "no time left for $k"; break; }
    i=$((i+1)); s=$(date +%s)
    timeout $left python3 -m qrjudge --kernel-dir $k --mode full --seed 7 2>$OUT/full_$i.err > $OUT/full_$i.json
    echo "run $i ($k) rc $? $(( $(date +%s) - s )) s"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r.get('score'), (r.get('error') or '')[:300]); [print('  ', s['shape'], s['mean_us']) for s in r.get('shapes',[])]" $OUT/full_$i.json
  done
fi

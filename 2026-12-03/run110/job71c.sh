#!/bin/bash
# Session 51: wgmma probe (bench/wgmma_probe.py: compile route, errors, timings); if it timed, the judge's `full`
# on the seed and on WG_FROM=48, alternating twice; then job70 (after_done under judges 12 and 11).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
s=$(date +%s)
timeout 150 python3 bench/wgmma_probe.py > $OUT/wgmma_probe.txt 2>&1; echo "wgmma probe rc $? $(( $(date +%s) - s )) s"
tail -40 $OUT/wgmma_probe.txt
if grep -q "^640x(512x448)" $OUT/wgmma_probe.txt; then
  v=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48); [[ -n ${LEAN:-} ]] && KERNELS="$v seed_kernels/tsqr_wy"
  i=0
  for k in ${KERNELS:-seed_kernels/tsqr_wy $v seed_kernels/tsqr_wy $v}; do
    i=$((i+1)); s=$(date +%s)
    timeout 150 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 2>$OUT/full_$i.err > $OUT/full_$i.json
    echo "run $i ($k) rc $? $(( $(date +%s) - s )) s"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r.get('score'), (r.get('error') or '')[:300]); [print('  ', s['shape'], s['mean_us']) for s in r.get('shapes',[])]" $OUT/full_$i.json
  done
fi

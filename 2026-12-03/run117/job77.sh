#!/bin/bash
# Session 54: the seed against WG_FROM=48 by wg_update (one chain; C -= V W of >= 128 columns only), alternating
# three times, then that variant's `final` and wgmma's GPU tests. ~3 min.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
a=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48 _WG_UPDATE='"wg_update"')
i=0
for k in seed_kernels/tsqr_wy $a seed_kernels/tsqr_wy $a seed_kernels/tsqr_wy $a final; do
  i=$((i+1)); s=$(date +%s); mode=full
  [[ $k == final ]] && k=$a mode=final
  timeout 150 python3 -m qrjudge --kernel-dir $k --mode $mode --seed 7 2>$OUT/run_$i.err > $OUT/run_$i.json
  echo "run $i ($k $mode) rc $? $(( $(date +%s) - s )) s"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r.get('score'), (r.get('error') or '')[:300]); print(' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[]) if s['shape'][:3] in ('640', '60x')))" $OUT/run_$i.json
done
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "wgmma or WG_FROM" 2>&1 | tail -3

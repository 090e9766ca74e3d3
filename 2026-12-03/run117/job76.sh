#!/bin/bash
# Session 54: wg_update_piped with a cheaper staging loop (136 registers), WG_STAGES 1 (two blocks an SM), 2 and 3;
# then the judge's `full`: the seed, WG_FROM=48 by wg_update (one chain, four waves) and by piped with _WG_STAGES 1,
# twice. ~4 min.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 100 python3 .devrun/ncu_wg.py 2>&1 | grep -v '^route' | tee $OUT/stages.txt
a=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48 _WG_UPDATE='"wg_update"')
b=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48 _WG_STAGES=1)
i=0
for k in seed_kernels/tsqr_wy $a $b seed_kernels/tsqr_wy $a $b; do
  i=$((i+1)); s=$(date +%s)
  timeout 150 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 2>$OUT/full_$i.err > $OUT/full_$i.json
  echo "run $i ($k) rc $? $(( $(date +%s) - s )) s"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r.get('score'), (r.get('error') or '')[:300]); [print('  ', s['shape'], s['mean_us']) for s in r.get('shapes',[]) if s['shape'][:3] in ('640', '60x')]" $OUT/full_$i.json
done

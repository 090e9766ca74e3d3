#!/bin/bash
# Session 55: WG_APPLY = 1 the default (wg_apply where wg_update could). 0. apply_probe with wg_apply_split (WG_SPLIT)
# on 60x1024's updates, and the GPU tests of wg_apply, WG_APPLY and WG_SPLIT; 1. the judge's `full`, alternating
# twice: WG_APPLY=2 (strips of 64 wherever a wave of blocks: 640x512's 64-column updates too), WG_SPLIT=1, the seed,
# WG_APPLY=0; 2. `final` on the seed. ~7 min; carry .whl and .devrun.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/r
timeout 100 python3 bench/apply_probe.py 640 512 448 64 60 1024 960 64 60 1024 448 64 60 1024 128 64 2>&1 | grep -v Warn | cut -c1-900
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "wgmma_apply or WG_APPLY or WG_SPLIT" 2>&1 | tail -3
two=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_APPLY=2)
zero=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_APPLY=0)
split=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_SPLIT=1)
i=0
for k in $two $split seed_kernels/tsqr_wy $zero $two $split seed_kernels/tsqr_wy $zero; do
  i=$((i+1))
  timeout 100 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 > $OUT/r/ab_$i.json 2> $OUT/r/ab_$i.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2][-20:], r['status'], r.get('score'), r.get('error','')[:200], ' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[]) if s['shape'][:3] in ('640', '60x')))" $OUT/r/ab_$i.json $k
done
timeout 100 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode final --seed 7 > $OUT/r/final.json 2> $OUT/r/final.err
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('final', r['status'], r.get('score'), r.get('worst'), r.get('tests', {}).get('passed'), r.get('tests', {}).get('total'), r.get('error','')[:300])" $OUT/r/final.json
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r

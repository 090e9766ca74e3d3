#!/bin/bash
# Session 55: wg_apply (wgmma.cu: the whole trailing update, V^T C, T^T W and C -= V W, in one launch on wgmma) on a
# Hopper. 1. apply_probe (errors against float64, ms against cuBLAS x3 and cuBLAS + wg_update) on the seed's update
# shapes; 2. wg_update as refactored (wg_fragments) against HEAD's; 3. its GPU tests; 4. the judge's `full`,
# alternating, WG_APPLY=1 against the seed; 5. timeline 640x512 with WG_APPLY=1. ~6 min; carry .whl and .devrun.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s)
timeout 120 python3 bench/apply_probe.py 640 512 448 64 640 320 256 64 60 1024 960 64 640 512 64 64 60 1024 64 64 2>&1 | grep -v Warn | tee $OUT/apply_probe.txt | cut -c1-700
echo "probe $(( $(date +%s) - s )) s"
timeout 60 python3 .devrun/wg_ab2.py 2>&1 | grep -v Warn | tee $OUT/wg_ab2.txt
s=$(date +%s)
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "wgmma_apply" 2>&1 | tail -4
echo "tests $(( $(date +%s) - s )) s"
v=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_APPLY=1)
i=0
for k in $v seed_kernels/tsqr_wy $v seed_kernels/tsqr_wy; do
  i=$((i+1))
  timeout 100 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 > $OUT/ab_$i.json 2> $OUT/ab_$i.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2][-20:], r['status'], r.get('score'), r.get('error','')[:200], ' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[]) if s['shape'][:3] in ('640', '60x')))" $OUT/ab_$i.json $k
done

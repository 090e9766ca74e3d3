#!/bin/bash
# Session 50: the after_done cheat on a GPU: judge 12's test, then judge 11 (c27d95c, .devrun/ab_old) on it and on
# the honest blocked_wy, `full`, seed 7. About 90 s. Carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k after_done > $OUT/judge12.txt 2>&1
echo "judge 12 after_done test rc $?"; tail -1 $OUT/judge12.txt
d=/tmp/cand; mkdir -p $d; cp seed_kernels/blocked_wy/* $d/; mv $d/kernel.py $d/base.py; cp tests/cheats/after_done.py $d/kernel.py
R=$PWD; cd .devrun/ab_old
for k in $d $R/seed_kernels/blocked_wy; do
  PYTHONPATH=$PWD:/tmp/site timeout 60 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 2>/dev/null > $OUT/judge11_$(basename $k).json
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], r['status'], r.get('judge'), r.get('score'), (r.get('error') or '')[:150]); [print('  ', s['shape'], s['median_us']) for s in r.get('shapes',[])]" $OUT/judge11_$(basename $k).json
done

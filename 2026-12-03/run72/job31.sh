#!/bin/bash
# Session 42, second call on a warm machine: why the seal tests and three planted-cheat tests failed in job30.
cd "$(dirname "$0")/.."
ps -eo pid,etimes,cmd | grep -E "qrjudge|pytest" | grep -v grep | head; pkill -9 -f "qrjudge|pytest" ; sleep 1
[ -d /tmp/site/torch ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
s=$(date +%s); timeout -s INT 100 python3 -m pytest -x -q --tb=short -p no:cacheprovider tests/test_seal.py tests/test_disarm.py > $OUT/seal.out 2>&1
echo "seal tests $(( $(date +%s) - s )) s"; grep -E "Error|assert|FAILED|passed|failed" $OUT/seal.out | head -20
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout -s INT 250 python3 -m pytest -q -rfs --tb=line -m "gpu and not alone" -k planted_cheat -n 4 -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gpu.out 2>&1
echo "gpu tests $(( $(date +%s) - s )) s"; grep -E "FAILED|passed|failed|Error" $OUT/gpu.out | cut -c1-400 | tail -14
pkill -9 -f "qrjudge|pytest"; sleep 1
timeout 60 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode quick --seed 7 > $OUT/quick.json 2>/dev/null
python3 -c "import json,sys; r=json.loads(open('$OUT/quick.json').read().strip().splitlines()[-1]); print('seed quick', r.get('status'), r.get('score'), (r.get('error') or '')[:300], r.get('timings',{}).get('setup_guard_s'))"

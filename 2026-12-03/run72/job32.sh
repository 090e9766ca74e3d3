#!/bin/bash
# Session 42, third call (warm H100): the disarming's cost on a GPU runner, the three cheats that failed under four
# workers run alone, and the seed in `full` by the judge before the disarming (09566aa) and now.
cd "$(dirname "$0")/.."
pkill -9 -f "qrjudge|pytest"; sleep 1
export PYTHONPATH=$PWD:/tmp/site
timeout 60 python3 .devrun/armprobe.py 2>&1 | tail -2
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout -s INT 150 python3 -m pytest -q -rfs --tb=line -m gpu -k "planted_cheat and (flush_overlap or frames_clock or honest_names)" -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gpu3.out 2>&1
echo "three cheats $(( $(date +%s) - s )) s"; grep -E "FAILED|passed|failed|Error" $OUT/gpu3.out | cut -c1-300 | tail -6
pkill -9 -f "qrjudge|pytest"; sleep 1
mkdir -p /tmp/before && tar -xf .devrun/before_disarm.tar -C /tmp/before
for tree in before now; do
  root=$PWD; [[ $tree == before ]] && root=/tmp/before
  (cd $root && PYTHONPATH=$root:/tmp/site timeout 90 python3 -m qrjudge --kernel-dir $OLDPWD/seed_kernels/tsqr_wy --mode full --seed 7 > $OUT/$tree.json 2>/dev/null)
  python3 -c "import json; r=json.loads(open('$OUT/$tree.json').read().strip().splitlines()[-1]); t=r.get('timings',{}); print('$tree', r.get('status'), r.get('score'), r.get('judge'), 'guard', t.get('setup_guard_s'), 'wall', t.get('total_s') or t.get('wall_s'), (r.get('error') or '')[:200])"
done
